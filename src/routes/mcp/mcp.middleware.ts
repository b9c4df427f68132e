/**
 * The MCP endpoint's own request chain, in place of the keyed chain of /projects/{slug}/*
 * (engagement-api-v3.md, "MCP endpoint"): the owner routes' key rules (secret key only; an embed
 * key 403 not_allowed, another project's key 403 key_wrong_project, a private project reachable)
 * with the key also accepted as `Authorization: Bearer <key>`; one count against the budget the
 * message calls for (a tool call: its wrapped route's, anything else: the read budget), with the
 * rate headers on every answer to a request carrying a valid key of the project (past the key
 * check, and on the refusals of such a key: the embed key's 403 and the 405 of another method);
 * the Idempotency-Key header on the whole message. No voter identity, and no content revision or cache retirement for the message itself:
 * the routes its tool calls run in process do those for what they change.
 */
import type { Context, MiddlewareHandler } from "hono";
import type { AppEnv } from "../../lib/http/context.ts";
import { ApiError } from "../../lib/http/errors.ts";
import { checkApiKey, type KeySources, keyOfPathProject } from "../../middleware/api-key.ts";
import { idempotencyMiddleware } from "../../middleware/idempotency.ts";
import { methodNotAllowed } from "../../middleware/method-check.ts";
import { type Budget, budgetByMethod, countRefusedRequest, rateLimitMiddleware } from "../../middleware/rate-limit.ts";
import { parseJson } from "./mcp.handlers.ts";
import { budgetOf, type ToolDefinition } from "./mcp.tool-kit.ts";

/**
 * The budget of an MCP message: tools/call of a known tool counts against its wrapped route's;
 * initialize, tools/list, notifications, an unknown tool and anything unreadable, the read budget.
 */
export function mcpBudget(tools: ReadonlyMap<string, ToolDefinition>) {
  return async (c: Context<AppEnv>): Promise<Budget> => {
    const message = parseJson(await c.req.text()) as { method?: unknown; params?: { name?: unknown } } | undefined;
    if (message?.method !== "tools/call" || typeof message.params?.name !== "string") return "read";
    const tool = tools.get(message.params.name);
    return tool === undefined ? "read" : budgetOf(tool);
  };
}

const KEY_SOURCES: KeySources = { bearer: true };

/**
 * The key check (the owner routes' rules, the key also as a bearer token); a refusal of a valid
 * key of the project (the embed key's 403 not_allowed) is counted against the key's own budget
 * for the message and carries the rate headers.
 */
function mcpKeyCheck(budgetOf: (c: Context<AppEnv>) => Promise<Budget>): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    try {
      await checkApiKey(c, KEY_SOURCES);
    } catch (error) {
      // No key, or one that no project has: nothing to count against.
      if (error instanceof ApiError && error.code !== "missing_key" && error.code !== "invalid_key") {
        const found = await keyOfPathProject(c, KEY_SOURCES);
        if (found !== undefined) await countRefusedRequest(c, found.key, found.project.id, await budgetOf(c));
      }
      throw error;
    }
    await next();
  };
}

/** The chain mounted on /projects/{slug}/mcp (src/app.ts). */
export function mcpRequestChain(tools: ReadonlyMap<string, ToolDefinition>): MiddlewareHandler<AppEnv>[] {
  const budgetOf = mcpBudget(tools);
  return [
    async (c, next) => {
      c.set("access", "owner");
      c.set("idempotencyScope", "owner");
      await next();
    },
    mcpKeyCheck(budgetOf),
    rateLimitMiddleware({ budgetOf }),
    idempotencyMiddleware(),
  ];
}

/**
 * 405 method_not_allowed with `Allow: POST` for every method but POST (and OPTIONS, the
 * preflights'), before the key check as on every path (src/middleware/method-check.ts, which it
 * precedes), so never a 401; when the request carries a valid key of the project, counted
 * against that key's budget for the method (GET and HEAD: read, others: write) with the rate
 * headers (engagement-api-v3.md, "MCP endpoint").
 */
export function mcpMethodCheck(): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    if (c.req.method === "POST" || c.req.method === "OPTIONS") return next();
    const found = await keyOfPathProject(c, KEY_SOURCES);
    if (found !== undefined) await countRefusedRequest(c, found.key, found.project.id, budgetByMethod(c));
    return methodNotAllowed(c, "POST");
  };
}
