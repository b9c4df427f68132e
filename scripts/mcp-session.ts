/**
 * A short MCP session against a project's MCP endpoint with the official SDK client (docs/mcp.md):
 * initialize, tools/list, then two read-only calls: search_features (`q`) and get_feature of the
 * first feature found. Changes nothing on the board.
 *
 *   npx tsx scripts/mcp-session.ts                       # the demo board of `npm start`
 *   MCP_URL=https://board.example.com/api/v3/projects/acme/mcp MCP_KEY=fb_sk_... npx tsx scripts/mcp-session.ts dark
 *
 * Exit code 1 when the server refuses the key or a call fails.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { DEMO_SECRET_KEY, DEMO_SLUG } from "../src/admin/demo.ts";

export interface SessionReport {
  server: { name: string; version: string } | undefined;
  protocolVersion: string | undefined;
  tools: string[];
  /** structuredContent of search_features: `{items, meta}`. */
  found: { items: { id: number; heading: string; vote_count: number | null }[]; meta: { total: number } };
  /** structuredContent of get_feature for the first feature found (with its comments), or null when none was. */
  feature: { id: number; heading: string; comments: unknown[] } | null;
}

/**
 * Runs the session against `url` (the endpoint, .../projects/{slug}/mcp) with the secret `key`,
 * searching for `q`; `log` receives one line per step. Throws when a call answers an error.
 */
export async function runSession(url: string, key: string, q: string, log: (line: string) => void = () => {}): Promise<SessionReport> {
  const client = new Client({ name: "mcp-session-script", version: "1.0.0" });
  const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { Authorization: `Bearer ${key}` } } });
  await client.connect(transport);
  try {
    const server = client.getServerVersion();
    log(`initialize: ${server?.name} ${server?.version}, protocol ${transport.protocolVersion}`);
    const { tools } = await client.listTools();
    log(`tools/list: ${tools.map((tool) => tool.name).join(", ")}`);
    const call = async <T>(name: string, args: Record<string, unknown>): Promise<T> => {
      const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
      const text = result.content[0]?.type === "text" ? result.content[0].text : "";
      if (result.isError) throw new Error(`${name} refused: ${text}`);
      return result.structuredContent as T;
    };
    const found = await call<SessionReport["found"]>("search_features", { q, sort: "votes", per_page: 5 });
    log(`search_features q=${JSON.stringify(q)}: ${found.meta.total} found`);
    for (const item of found.items) log(`  #${item.id} ${item.heading} (${item.vote_count ?? "?"} votes)`);
    const first = found.items[0];
    const feature = first === undefined ? null : await call<NonNullable<SessionReport["feature"]>>("get_feature", { feature_id: first.id });
    if (feature !== null) log(`get_feature ${feature.id}: ${feature.heading}, ${feature.comments.length} comments on the first page`);
    return { server, protocolVersion: transport.protocolVersion, tools: tools.map((tool) => tool.name), found, feature };
  } finally {
    await client.close();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const url = process.env.MCP_URL ?? `http://127.0.0.1:8080/api/v3/projects/${DEMO_SLUG}/mcp`;
  const key = process.env.MCP_KEY ?? DEMO_SECRET_KEY;
  runSession(url, key, process.argv[2] ?? "dark", (line) => console.log(line)).catch((error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    process.exit(1);
  });
}
