/**
 * What a tool of the MCP endpoint is made of (engagement-api-v3.md, "MCP endpoint"): the route
 * it wraps, its arguments (built from that route's own request schemas, so they cannot drift
 * apart), and how it runs through the route in process. The tools themselves are the table in
 * mcp.tools.ts.
 */
import { z } from "@hono/zod-openapi";
import type { Db } from "../../../db/connect.ts";
import type { Meta } from "../../contract/envelope.ts";
import type { ProjectContext } from "../../lib/http/context.ts";
import { IDEMPOTENCY_KEY_MAX_LENGTH, IDEMPOTENCY_KEY_PATTERN } from "../../middleware/idempotency.ts";
import type { Budget } from "../../middleware/rate-limit.ts";

/** A route definition (createRoute) as far as a tool needs it: where it is and how it is reached. */
export interface WrappedRoute {
  method: string;
  /** The OpenAPI path under /api/v3, e.g. /projects/{slug}/admin/features/{id}. */
  path: string;
}

/** The error object of the envelope (contract, "Errors"). */
export interface ToolError {
  code: string;
  field: string | null;
  message: string;
}

/** A route's answer, or a tool's: the envelope's data and meta on 2xx, its error otherwise. */
export type ToolOutcome =
  | { ok: true; status: number; data: unknown; meta: z.infer<typeof Meta> | null }
  | { ok: false; status: number; error: ToolError };

/** Calls routes in process with the caller's key (mcp.runtime.ts). */
export interface ToolRuntime {
  /**
   * Runs `route` through the app: `params` fill its path ({slug} is the caller's project),
   * `query` becomes its query string (arrays repeat the parameter), `body` its JSON body.
   */
  call(
    route: WrappedRoute,
    input?: { params?: Record<string, number>; query?: Record<string, unknown>; body?: Record<string, unknown> },
  ): Promise<ToolOutcome>;
  /**
   * Runs `read` with the caller's database, project and the app's clock: a read no route serves
   * on its own (find_similar_features with a text). Its ApiError is the refusal, as a route's.
   */
  read(read: (context: ReadContext) => Promise<unknown>): Promise<ToolOutcome>;
  /** The app's clock. */
  now(): Date;
}

/** What a direct read gets (ToolRuntime.read). */
export interface ReadContext {
  db: Db;
  project: ProjectContext;
  now: Date;
}

/** MCP tool annotations (hints to the client; the server enforces nothing by them). */
export interface ToolAnnotations {
  readOnlyHint: boolean;
  destructiveHint?: boolean;
  idempotentHint?: boolean;
  openWorldHint: false;
}

export interface ToolDefinition<A extends z.ZodObject = z.ZodObject> {
  name: string;
  title: string;
  /** For the assistant: what the tool does, what it may change, what it answers. */
  description: string;
  /** The route whose budget, checks and answers the tool has (and whose schemas give its arguments). */
  wraps: WrappedRoute;
  /** Path parameters of the wrapped route, by the argument that fills each ({id: "feature_id"}). */
  pathArguments: Record<string, string>;
  /**
   * Query or body fields of the wrapped route that are deliberately not arguments, each with the
   * reason (test/mcp.test.ts fails on a field of the route neither here nor among the arguments).
   */
  notArguments?: Record<string, string>;
  /** The arguments, strict: an unknown one is validation_failed naming it. */
  arguments: A;
  annotations: ToolAnnotations;
  run(args: z.output<A>, runtime: ToolRuntime): Promise<ToolOutcome>;
}

/** Identity function that types a tool's `run` by its arguments. */
export function defineTool<A extends z.ZodObject>(tool: ToolDefinition<A>): ToolDefinition<A> {
  return tool;
}

/** The budget a call of `tool` counts against: its wrapped route's (contract, "Limits"). */
export function budgetOf(tool: ToolDefinition): Budget {
  return tool.wraps.method === "get" ? "read" : "write";
}

/** Whether `tool` writes (and so takes idempotency_key). */
export function isWriteTool(tool: ToolDefinition): boolean {
  return budgetOf(tool) === "write";
}

type RouteWithQuery = { request: { query: z.ZodObject } };
type RouteWithBody = { request: { body: { content: { "application/json": { schema: z.ZodObject } } } } };
type RouteWithParams = { request: { params: z.ZodObject } };

/** The wrapped route's query parameters, each validated by the route's own schema. */
export function queryShape<R extends RouteWithQuery>(route: R): R["request"]["query"]["shape"] {
  return route.request.query.shape;
}

/** The wrapped route's JSON body fields, each validated by the route's own schema. */
export function bodyShape<R extends RouteWithBody>(route: R): R["request"]["body"]["content"]["application/json"]["schema"]["shape"] {
  return route.request.body.content["application/json"].schema.shape;
}

/** A path parameter of the wrapped route (its own schema) as an argument, described for the assistant. */
export function pathArgument<R extends RouteWithParams, K extends keyof R["request"]["params"]["shape"] & string>(
  route: R,
  name: K,
  description: string,
): R["request"]["params"]["shape"][K] {
  const schema = route.request.params.shape[name] as z.ZodType;
  return schema.openapi({ description }) as R["request"]["params"]["shape"][K];
}

/**
 * The optional idempotency_key of write tools: the Idempotency-Key header's rule (contract,
 * "Limits"), 1 to 200 printable ASCII characters.
 */
export const IdempotencyKeyArgument = z
  .string()
  .min(1)
  .max(IDEMPOTENCY_KEY_MAX_LENGTH)
  .regex(IDEMPOTENCY_KEY_PATTERN, "must be printable ASCII")
  .optional()
  .openapi({
    description:
      "Makes the call safe to retry: a repeat with the same key and tool (and the same arguments) within 24 hours returns the first result and changes nothing; the same key with another tool is refused (idempotency_mismatch)",
    example: "merge-41-40",
  });

/** `args` without the named keys (the arguments that are not the wrapped route's body). */
export function without<T extends Record<string, unknown>, K extends keyof T>(args: T, ...keys: K[]): Omit<T, K> {
  const rest: Record<string, unknown> = { ...args };
  for (const key of keys) delete rest[key as string];
  return rest as Omit<T, K>;
}
