/**
 * The MCP server of one request (engagement-api-v3.md, "MCP endpoint"; stateless: a server and a
 * transport per HTTP request, nothing kept between them). The SDK's low-level Server, not
 * McpServer: the input schemas are the routes' own (mcp.tool-list.ts), invalid arguments answer
 * the contract's validation_failed, and an unknown tool must be the JSON-RPC error -32602, where
 * McpServer would answer an isError result.
 */
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, McpError, type Tool } from "@modelcontextprotocol/sdk/types.js";
import type { jsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/types.js";
import type { Logger } from "pino";
import { callTool, type ToolCallContext } from "./mcp.calls.ts";
import type { ToolDefinition } from "./mcp.tool-kit.ts";

/** serverInfo of initialize: the service and the API version it serves. */
export const MCP_SERVER_NAME = "feedback-board";
export const MCP_SERVER_VERSION = "3";

/** What every request's server shares: the tools, their tools/list entries, the SDK's schema validator. */
export interface McpToolSet {
  byName: ReadonlyMap<string, ToolDefinition>;
  /** tools/list entries, built on first use. */
  descriptors(): Tool[];
  /** Required by the SDK's Server (elicitation only, which this server never asks for); shared so no request builds one. */
  validator: jsonSchemaValidator;
}

/** A tool call's `arguments` as the client sent them, when the SDK would refuse them (not an object). */
export interface ArgumentsAsSent {
  value: unknown;
}

/**
 * A server for one MCP request of project `projectName`, its tool calls run in `context`;
 * `context.argumentsAsSent`, when set, are the arguments of the request's tool call
 * (mcp.handlers.ts withoutNonObjectArguments).
 */
export function createMcpServer(
  tools: McpToolSet,
  context: ToolCallContext & { argumentsAsSent?: ArgumentsAsSent | undefined },
  projectName: string,
  logger: Logger,
): Server {
  const server = new Server(
    { name: MCP_SERVER_NAME, title: `Feedback board of ${projectName}`, version: MCP_SERVER_VERSION },
    {
      capabilities: { tools: {} },
      jsonSchemaValidator: tools.validator,
      instructions:
        `Tools to run the feedback board of "${projectName}" as its owner: find and read feature requests with their ` +
        "comments, votes and revenue, answer as the team, update or merge features, follow the events feed and publish " +
        "releases. Writes take effect at once on the public board; pass idempotency_key to make a write safe to retry.",
    },
  );
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: tools.descriptors() }));
  server.setRequestHandler(CallToolRequestSchema, async (request) => {
    const tool = tools.byName.get(request.params.name);
    if (tool === undefined)
      throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${request.params.name} (tools/list names the tools)`);
    try {
      const args = context.argumentsAsSent === undefined ? request.params.arguments : context.argumentsAsSent.value;
      return await callTool(tool, args, context);
    } catch (error) {
      // Route failures are results already (runtime); this is a failure of the endpoint itself.
      logger.error({ err: error, tool: tool.name }, "mcp tool call failed");
      throw new McpError(ErrorCode.InternalError, "internal error; safe to retry");
    }
  });
  return server;
}
