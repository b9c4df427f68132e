/**
 * POST /projects/{slug}/mcp (engagement-api-v3.md, "MCP endpoint"): one JSON-RPC message through
 * the SDK's Streamable HTTP transport for web-standard Requests, stateless (no session id) and
 * answering application/json. The key, the budget and the Idempotency-Key header were handled by
 * the endpoint's chain (mcp.middleware.ts); tool calls run their routes in process (mcp.runtime.ts).
 */
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import { LATEST_PROTOCOL_VERSION } from "@modelcontextprotocol/sdk/types.js";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import type { AppRouteHandler } from "../../lib/http/router.ts";
import { presentedKey } from "../../middleware/api-key.ts";
import type * as routes from "./mcp.routes.ts";
import { type AppDispatch, createToolRuntime } from "./mcp.runtime.ts";
import { type ArgumentsAsSent, createMcpServer, type McpToolSet } from "./mcp.server.ts";

/** The oldest protocol version served (the contract: 2025-06-18 or later). */
export const MIN_PROTOCOL_VERSION = "2025-06-18";

export interface McpEndpoint {
  tools: McpToolSet;
  dispatch: AppDispatch;
  /** The API prefix the routes are mounted under (/api/v3). */
  prefix: string;
}

/** The JSON value of `text`, or undefined when it is not JSON. */
export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

type JsonRpcMessage = { method?: unknown; params?: { protocolVersion?: unknown } };

/**
 * The message as the transport gets it: an initialize asking for a protocol version older than
 * the oldest served asks, in effect, for the newest (the protocol's negotiation: the server
 * answers a version it supports and the client decides whether to go on).
 */
function negotiated(message: unknown): unknown {
  const request = message as JsonRpcMessage;
  const version = request?.params?.protocolVersion;
  if (request?.method !== "initialize" || typeof version !== "string" || version >= MIN_PROTOCOL_VERSION) return message;
  return { ...request, params: { ...request.params, protocolVersion: LATEST_PROTOCOL_VERSION } };
}

/**
 * `message` split for the transport: a tools/call whose `arguments` is present but not a JSON
 * object loses them, and they are returned as sent (`sent`). The SDK's tools/call schema would
 * answer them with a JSON-RPC error (-32603 holding its validation dump), where the contract
 * ("MCP endpoint") wants a result refusing them, validation_failed naming `arguments`; one message
 * per request, so `sent` is that one call's arguments. Any other message is returned unchanged.
 */
export function withoutNonObjectArguments(message: unknown): { message: unknown; sent?: ArgumentsAsSent } {
  const request = message as { method?: unknown; params?: unknown } | null;
  const params = request?.params;
  if (request?.method !== "tools/call" || typeof params !== "object" || params === null || !("arguments" in params)) return { message };
  const { arguments: sent, ...rest } = params as { arguments: unknown };
  if (typeof sent === "object" && sent !== null && !Array.isArray(sent)) return { message };
  return { message: { ...request, params: rest }, sent: { value: sent } };
}

export function postMcpMessage(endpoint: McpEndpoint): AppRouteHandler<typeof routes.postMcpMessage> {
  return async (c) => {
    const text = await c.req.text();
    const message = parseJson(text);
    const jsonRpcError = (code: number, detail: string) => c.json({ jsonrpc: "2.0", id: null, error: { code, message: detail } }, 400);
    if (Array.isArray(message)) {
      return jsonRpcError(-32600, "Invalid Request: send one JSON-RPC message per request (protocol 2025-06-18 has no batches)");
    }
    const version = c.req.header("MCP-Protocol-Version");
    if (version !== undefined && version < MIN_PROTOCOL_VERSION) {
      return jsonRpcError(-32000, `Bad Request: Unsupported protocol version ${version} (${MIN_PROTOCOL_VERSION} or later)`);
    }

    const deps = c.get("deps");
    const project = c.get("project");
    const runtime = createToolRuntime({
      dispatch: endpoint.dispatch,
      prefix: endpoint.prefix,
      origin: new URL(c.req.url).origin,
      db: deps.db,
      project,
      key: presentedKey(c, { bearer: true }),
      requestId: c.get("requestId"),
      now: deps.now,
    });
    const logger = deps.logger.child({ req_id: c.get("requestId") });
    const context = { runtime, idempotencyStore: deps.idempotencyStore, projectId: project.id };
    const { message: forTransport, sent } = withoutNonObjectArguments(message === undefined ? undefined : negotiated(message));
    const server = createMcpServer(endpoint.tools, { ...context, argumentsAsSent: sent }, project.name, logger);
    const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    await server.connect(transport);
    try {
      // The body was read already; a body that is not JSON goes to the transport again, as text,
      // for the protocol's own parse error.
      const response =
        message === undefined
          ? await transport.handleRequest(new Request(c.req.url, { method: "POST", headers: c.req.raw.headers, body: text }))
          : await transport.handleRequest(c.req.raw, { parsedBody: forTransport });
      const contentType = response.headers.get("Content-Type");
      const headers: Record<string, string> = contentType === null ? {} : { "Content-Type": contentType };
      const status = response.status as ContentfulStatusCode;
      if (response.body === null) return c.body(null, status, headers);
      return c.body(await response.text(), status, headers);
    } finally {
      await server.close();
    }
  };
}
