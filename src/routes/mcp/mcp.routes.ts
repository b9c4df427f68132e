/** The MCP endpoint's route definition (engagement-api-v3.md, "MCP endpoint"). */
import { createRoute, z } from "@hono/zod-openapi";
import { ownerErrorResponses } from "../../contract/errors.ts";
import { SlugParam } from "../../contract/params.ts";
import { describedRoute } from "../../contract/route-description.ts";
import { JSON_RPC_REQUEST_REF, JSON_RPC_RESPONSE_REF } from "./mcp.schemas.ts";

export const MCP_TAG = "MCP";
/** The secret key as X-API-Key, or the same key as a bearer token (registered by the router). */
export const MCP_SECURITY: Record<string, string[]>[] = [{ ApiKey: [] }, { BearerKey: [] }];

const jsonRpc = (description: string) => ({ content: { "application/json": { schema: JSON_RPC_RESPONSE_REF } }, description });

const definition = describedRoute(
  { kind: "write", voter: "none" },
  {
    method: "post" as const,
    path: "/projects/{slug}/mcp",
    operationId: "postMcpMessage",
    summary: "Model Context Protocol endpoint for AI assistants",
    description:
      "A Model Context Protocol server (Streamable HTTP transport, JSON-RPC 2.0, protocol version 2025-06-18 or later, " +
      "stateless: no session id) whose tools act on the project as its owner: search_features, get_feature, " +
      "find_similar_features, list_events, revenue_by_feature, update_feature, merge_features, reply_as_team, " +
      "publish_release. The project's " +
      "secret key, as X-API-Key or `Authorization: Bearer <key>`; key refusals are the JSON envelope. Send " +
      "`Accept: application/json, text/event-stream`; answers are application/json. initialize, tools/list and " +
      "notifications count against the read budget, a tool call against the budget of the route it wraps. A tool call " +
      "runs the wrapped route in process: its refusals (4xx) are results with isError true whose text is the error " +
      "object; invalid arguments are validation_failed naming the argument; write tools take an optional " +
      "idempotency_key argument with the semantics of the Idempotency-Key header. See docs/mcp.md.",
    tags: [MCP_TAG],
    request: {
      params: z.object({ slug: SlugParam }),
      body: {
        required: true,
        description: "One JSON-RPC message",
        content: {
          "application/json": {
            schema: JSON_RPC_REQUEST_REF,
            example: { jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "get_feature", arguments: { feature_id: 41 } } },
          },
        },
      },
    },
    responses: {
      200: jsonRpc("The JSON-RPC answer to the request: its result (tool refusals included, as isError results) or a JSON-RPC error"),
      202: { description: "A notification or response was accepted; no body" },
      400: jsonRpc("JSON-RPC error: the body is not JSON (-32700), not a JSON-RPC message, a batch, or an unsupported protocol version"),
      406: jsonRpc("JSON-RPC error: Accept must list application/json and text/event-stream"),
      415: jsonRpc("JSON-RPC error: Content-Type must be application/json"),
      ...ownerErrorResponses(401, 403, 404, 405, 409, 413, 422, 429, 500),
    },
  },
);

export const postMcpMessage = createRoute({ ...definition, security: MCP_SECURITY });
