/**
 * The MCP endpoint's own request chain, in place of the keyed chain of /projects/{slug}/*
 * (engagement-api-v3.md, "MCP endpoint"): the owner routes' key rules (secret key only; an embed
 * key 403 not_allowed, another project's key 403 key_wrong_project, a private project reachable)
 * with the key also accepted as `Authorization: Bearer <key>`; one count against the budget the
 * message calls for (a tool call: its wrapped route's, anything else: the read budget), with the
 * rate headers on every answer past the key check; the Idempotency-Key header on the whole
 * message. No voter identity, and no content revision or cache retirement for the message itself:
 * the routes its tool calls run in process do those for what they change.
 */
import type { Context, MiddlewareHandler } from "hono";
import type { AppEnv } from "../../lib/http/context.ts";
import { apiKeyMiddleware } from "../../middleware/api-key.ts";
import { idempotencyMiddleware } from "../../middleware/idempotency.ts";
import { type Budget, rateLimitMiddleware } from "../../middleware/rate-limit.ts";
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

/** The chain mounted on /projects/{slug}/mcp (src/app.ts). */
export function mcpRequestChain(tools: ReadonlyMap<string, ToolDefinition>): MiddlewareHandler<AppEnv>[] {
  return [
    async (c, next) => {
      c.set("access", "owner");
      c.set("idempotencyScope", "owner");
      await next();
    },
    apiKeyMiddleware({ bearer: true }),
    rateLimitMiddleware({ budgetOf: mcpBudget(tools) }),
    idempotencyMiddleware(),
  ];
}
