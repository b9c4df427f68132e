/**
 * tools/call (engagement-api-v3.md, "MCP endpoint"): validate the arguments by the tool's schema,
 * run the tool (its wrapped route in process), and answer an MCP CallToolResult:
 * - success: one text item holding the route's `data` as JSON, and `structuredContent` = that
 *   object, or `{items, meta}` for a list;
 * - a refusal of the route (4xx) or of the arguments (validation_failed naming the argument): a
 *   result with `isError: true` whose text holds the error object (also `structuredContent.error`);
 * - a server failure of the route (5xx): the same, with its `internal` error (safe to retry).
 *
 * idempotency_key (write tools) has the semantics of the Idempotency-Key header (contract,
 * "Limits"), kept in the same shared store with the same lock and retention: scoped by project,
 * fingerprinted by tool and arguments, so the same key and tool returns the first result and
 * changes nothing, the same key with another tool (or other arguments) is idempotency_mismatch,
 * and a repeat while the first call runs is idempotency_in_progress. A failed (5xx) call is not
 * recorded, so it may be retried with the same key.
 */
import { hash } from "node:crypto";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { validationFailure } from "../../lib/http/router.ts";
import { IDEMPOTENCY_LOCK_SECONDS, IDEMPOTENCY_RETENTION_SECONDS } from "../../middleware/idempotency.ts";
import { type ClaimResult, type IdempotencyStore, IdempotencyStoreUnavailable } from "../../store/store.types.ts";
import { isWriteTool, type ToolDefinition, type ToolError, type ToolOutcome, type ToolRuntime, without } from "./mcp.tool-kit.ts";

export interface ToolCallContext {
  runtime: ToolRuntime;
  idempotencyStore: IdempotencyStore;
  projectId: number;
}

/** JSON with object keys sorted at every depth: equal arguments give equal fingerprints whatever their order. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value)
      .filter(([, item]) => item !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([key, item]) => `${JSON.stringify(key)}:${canonicalJson(item)}`).join(",")}}`;
  }
  return JSON.stringify(value);
}

/** An isError result holding `error` (the envelope's error object). */
export function errorResult(error: ToolError): CallToolResult {
  return { content: [{ type: "text", text: JSON.stringify(error) }], structuredContent: { error }, isError: true };
}

/** The result of `tool`'s outcome; an error naming a path parameter is renamed to its argument. */
export function resultOf(tool: ToolDefinition, outcome: ToolOutcome): CallToolResult {
  if (!outcome.ok) {
    const { field } = outcome.error;
    const renamed = field !== null && tool.pathArguments[field] !== undefined ? tool.pathArguments[field] : field;
    return errorResult({ ...outcome.error, field: renamed ?? null });
  }
  const { data, meta } = outcome;
  const structured = Array.isArray(data) ? { items: data, meta } : (data as Record<string, unknown>);
  return { content: [{ type: "text", text: JSON.stringify(data) }], structuredContent: structured };
}

/**
 * Runs `tool` with `rawArguments` (as the client sent them; absent is no arguments, anything but
 * an object, null included, is validation_failed naming `arguments`) for the caller of `context`.
 */
export async function callTool(tool: ToolDefinition, rawArguments: unknown, context: ToolCallContext): Promise<CallToolResult> {
  const parsed = tool.arguments.safeParse(rawArguments === undefined ? {} : rawArguments);
  if (!parsed.success) {
    const failure = validationFailure(parsed.error.issues, "arguments");
    return errorResult({ code: failure.code, field: failure.field, message: failure.message });
  }
  const args = parsed.data as Record<string, unknown>;
  const key = isWriteTool(tool) ? (args.idempotency_key as string | undefined) : undefined;
  const run = async () => {
    const outcome = await tool.run(without(args, "idempotency_key"), context.runtime);
    return { result: resultOf(tool, outcome), failed: !outcome.ok && outcome.status >= 500 };
  };
  if (key === undefined) return (await run()).result;
  const fingerprint = `${tool.name} ${hash("sha256", canonicalJson(without(args, "idempotency_key")), "hex")}`;
  return idempotent(context, `${context.projectId}:mcp:${hash("sha256", key, "hex")}`, fingerprint, run);
}

const inProgress = () =>
  errorResult({
    code: "idempotency_in_progress",
    field: null,
    message: "an earlier call with this idempotency_key is still running; retry in a second",
  });

/** The claim / replay / record protocol of src/middleware/idempotency.ts, for one tool call. */
async function idempotent(
  context: ToolCallContext,
  recordKey: string,
  fingerprint: string,
  run: () => Promise<{ result: CallToolResult; failed: boolean }>,
): Promise<CallToolResult> {
  const store = context.idempotencyStore;
  let claim: ClaimResult;
  try {
    claim = await store.claim(recordKey, fingerprint, IDEMPOTENCY_LOCK_SECONDS);
  } catch (error) {
    // The shared store did not answer: the call does not run (docs/architecture.md, "Data rules"),
    // as on the routes.
    if (!(error instanceof IdempotencyStoreUnavailable)) throw error;
    return error.claimMayExist ? inProgress() : errorResult({ code: "internal", field: null, message: "internal error; safe to retry" });
  }
  if (!claim.claimed) {
    const { record } = claim;
    if (record.fingerprint !== fingerprint) {
      return errorResult({
        code: "idempotency_mismatch",
        field: "idempotency_key",
        message: "this idempotency_key was already used for another tool or other arguments",
      });
    }
    if (record.state === "running") return inProgress();
    const first = JSON.parse(record.response.body) as CallToolResult;
    return { ...first, _meta: { ...first._meta, idempotent_replay: true } };
  }
  let outcome: { result: CallToolResult; failed: boolean };
  try {
    outcome = await run();
  } catch (error) {
    await store.release(recordKey, claim.token).catch(() => {});
    throw error;
  }
  if (outcome.failed) {
    await store.release(recordKey, claim.token).catch(() => {});
    return outcome.result;
  }
  const stored = { status: 200, headers: { "Content-Type": "application/json" }, body: JSON.stringify(outcome.result) };
  // The work is done and its result goes out whatever the store says (the store retries the record).
  await store.complete(recordKey, claim.token, fingerprint, stored, IDEMPOTENCY_RETENTION_SECONDS).catch(() => {});
  return outcome.result;
}
