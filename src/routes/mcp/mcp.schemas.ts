/**
 * The JSON-RPC 2.0 messages of the MCP endpoint as OpenAPI schemas (engagement-api-v3.md, "MCP
 * endpoint"), loosely typed: the Model Context Protocol (protocol version 2025-06-18 or later)
 * defines them, and its SDK validates them, so the route declares plain schema objects that
 * describe without validating (a malformed message gets the protocol's own JSON-RPC error, not a
 * 422 envelope). Registered under components/schemas by the area's router.
 */
import type { OpenAPIHono } from "@hono/zod-openapi";

type SchemaObject = Parameters<OpenAPIHono["openAPIRegistry"]["registerComponent"]>[2];

const id = {
  type: ["string", "integer"],
  description: "Request id chosen by the client; the answer carries the same one",
  examples: [1],
};

/** A request or notification from the client: initialize, notifications/initialized, tools/list, tools/call, ping. */
export const JsonRpcRequestSchema: SchemaObject = {
  type: "object",
  description:
    "A JSON-RPC 2.0 request (with id) or notification (without) of the Model Context Protocol. One message per POST: batches are refused.",
  properties: {
    jsonrpc: { type: "string", enum: ["2.0"] },
    id,
    method: {
      type: "string",
      description: "initialize, notifications/initialized, tools/list, tools/call or ping",
      examples: ["tools/call"],
    },
    params: {
      type: "object",
      additionalProperties: true,
      description: "tools/call: {name, arguments}; initialize: {protocolVersion, capabilities, clientInfo}",
      examples: [{ name: "get_feature", arguments: { feature_id: 41 } }],
    },
  },
  required: ["jsonrpc", "method"],
  additionalProperties: true,
};

/** The server's answer to a request: `result` or `error`. */
export const JsonRpcResponseSchema: SchemaObject = {
  type: "object",
  description:
    "A JSON-RPC 2.0 response. initialize: {protocolVersion, capabilities: {tools}, serverInfo: {name, version}}; tools/list: {tools: [{name, description, inputSchema, annotations}]}; tools/call: {content: [{type: text, text}], structuredContent, isError?}. A tool the server lacks is the error -32602.",
  properties: {
    jsonrpc: { type: "string", enum: ["2.0"] },
    id: { ...id, type: ["string", "integer", "null"] },
    result: { type: "object", additionalProperties: true, description: "The method's result" },
    error: {
      type: "object",
      description:
        "A JSON-RPC error: -32700 parse error, -32600 invalid request, -32601 unknown method, -32602 invalid params (unknown tool)",
      properties: {
        code: { type: "integer", examples: [-32602] },
        message: { type: "string" },
        data: {},
      },
      required: ["code", "message"],
    },
  },
  required: ["jsonrpc"],
  additionalProperties: true,
};

/** Where the schemas are registered (components/schemas). */
export const JSON_RPC_REQUEST_REF = { $ref: "#/components/schemas/JsonRpcRequest" } as const;
export const JSON_RPC_RESPONSE_REF = { $ref: "#/components/schemas/JsonRpcResponse" } as const;
