/**
 * Router of the MCP area (engagement-api-v3.md, "MCP endpoint"): POST /projects/{slug}/mcp, and
 * the request chain src/app.ts mounts on that path instead of the keyed chain.
 */
import { AjvJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/ajv";
import { createRouter } from "../../lib/http/router.ts";
import * as handlers from "./mcp.handlers.ts";
import { mcpMethodCheck, mcpRequestChain } from "./mcp.middleware.ts";
import * as routes from "./mcp.routes.ts";
import type { AppDispatch } from "./mcp.runtime.ts";
import { JsonRpcRequestSchema, JsonRpcResponseSchema } from "./mcp.schemas.ts";
import type { McpToolSet } from "./mcp.server.ts";
import { toolDescriptors } from "./mcp.tool-list.ts";
import { MCP_TOOLS } from "./mcp.tools.ts";

/** The endpoint's path under the API prefix, as hono matches it. */
export const MCP_PATH = "/projects/:slug/mcp";

const TOOLS_BY_NAME = new Map(MCP_TOOLS.map((tool) => [tool.name, tool]));

/** The chain of the MCP path: key (X-API-Key or Bearer), budget by message, Idempotency-Key. */
export function createMcpRequestChain() {
  return mcpRequestChain(TOOLS_BY_NAME);
}

/** The endpoint's 405 for other methods, mounted before the app's method check. */
export function createMcpMethodCheck() {
  return mcpMethodCheck();
}

/**
 * The router; `dispatch` is the app's own fetch (tool calls run their routes through it) and
 * `prefix` the API prefix the app mounts routers under.
 */
export function createMcpRouter(options: { dispatch: AppDispatch; prefix: string }) {
  const router = createRouter();
  router.openAPIRegistry.registerComponent("schemas", "JsonRpcRequest", JsonRpcRequestSchema);
  router.openAPIRegistry.registerComponent("schemas", "JsonRpcResponse", JsonRpcResponseSchema);
  router.openAPIRegistry.registerComponent("securitySchemes", "BearerKey", {
    type: "http",
    scheme: "bearer",
    description: "The project's secret key as a bearer token (the MCP endpoint only)",
  });
  let descriptors: ReturnType<typeof toolDescriptors> | undefined;
  let validator: AjvJsonSchemaValidator | undefined;
  const tools: McpToolSet = {
    byName: TOOLS_BY_NAME,
    descriptors: () => {
      descriptors ??= toolDescriptors(MCP_TOOLS);
      return descriptors;
    },
    get validator() {
      validator ??= new AjvJsonSchemaValidator();
      return validator;
    },
  };
  router.openapi(routes.postMcpMessage, handlers.postMcpMessage({ tools, dispatch: options.dispatch, prefix: options.prefix }));
  return router;
}

export { toolDescriptors } from "./mcp.tool-list.ts";
// The tool table and what the tests compare it with.
export { MCP_TOOLS } from "./mcp.tools.ts";
