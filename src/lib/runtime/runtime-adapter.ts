/**
 * The library internals the hot path relies on, in one place (design.md, "Per-request
 * services"). Each is something a library does not promise: runtime-adapter.test.ts checks each
 * against the installed versions and fails when an upgrade changes it, so the upgrade is noticed
 * here instead of as a slower or broken request path.
 *
 * - @hono/node-server's lightweight Response keeps a string body under a private symbol until
 *   someone reads its stream (`cachedStringBody`): the ETag and the shared read cache read it
 *   without building a stream.
 * - @hono/node-server passes Node's request and response as `c.env.incoming` / `c.env.outgoing`
 *   (`nodeRequest`, `nodeResponse`): static headers, the request id and the rate headers go
 *   straight onto the ServerResponse (`setResponseHeader`), a cached hit is written there in one
 *   go (`sendDirect`), and the body limit reads the framing headers and closes or drains the socket.
 * - hono's HonoRequest caches each body reader's promise in `bodyCache` (`replaceBodyText`): the
 *   identity route reads an empty JSON body as `{}`.
 *
 * The database driver's internal (kysely-postgres-js's use of the client) is in db/, which
 * imports nothing from src/: db/prepared-statement-client.ts.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { RESPONSE_ALREADY_SENT } from "@hono/node-server/utils/response";
import type { Context } from "hono";

/**
 * The body of a response built from a string, read without turning it into a stream; undefined
 * for any other response (a stream, bytes, or a response of another implementation).
 */
export function cachedStringBody(response: Response): string | undefined {
  for (const symbol of Object.getOwnPropertySymbols(response)) {
    if (symbol.description !== "cache") continue;
    const cached = (response as unknown as Record<symbol, unknown>)[symbol];
    if (Array.isArray(cached) && typeof cached[1] === "string") return cached[1];
  }
  return undefined;
}

/** Node's request message behind a hono context, or undefined for an in-process request. */
// biome-ignore lint/suspicious/noExplicitAny: any app's context
export function nodeRequest(c: Context<any>): IncomingMessage | undefined {
  return (c.env as { incoming?: IncomingMessage } | undefined)?.incoming;
}

/** Node's response behind a hono context, or undefined for an in-process request. */
// biome-ignore lint/suspicious/noExplicitAny: any app's context
export function nodeResponse(c: Context<any>): ServerResponse | undefined {
  return (c.env as { outgoing?: ServerResponse } | undefined)?.outgoing;
}

/** Makes every later read of the request body (text, json) see `text` instead. */
// biome-ignore lint/suspicious/noExplicitAny: any app's context
export function replaceBodyText(c: Context<any>, text: string): void {
  // hono's BodyCache type names the readers, but holds their promises.
  (c.req.bodyCache as Record<string, unknown>).text = Promise.resolve(text);
  delete (c.req.bodyCache as Record<string, unknown>).json;
  delete (c.req.bodyCache as Record<string, unknown>).arrayBuffer;
}

/**
 * Sets a header every answer to this request carries (errors and 304 included). Under Node it
 * goes onto the ServerResponse, where Node merges it under the headers of the response hono
 * writes (so a header the response itself sets wins, as a later c.header() does); this spares
 * building undici Headers, which check each name and value, on every request. In-process it is
 * a hono prepared header.
 */
// biome-ignore lint/suspicious/noExplicitAny: any app's context
export function setResponseHeader(c: Context<any>, name: string, value: string): void {
  const outgoing = nodeResponse(c);
  if (outgoing !== undefined && !outgoing.headersSent) outgoing.setHeader(name, value);
  else c.header(name, value);
}

/**
 * Writes a whole answer straight onto Node's ServerResponse (`headers` as flat name/value pairs,
 * merged over those set with setResponseHeader) and returns the response that tells
 * @hono/node-server it was sent; undefined in-process or once headers went out (the caller then
 * answers through hono).
 */
// biome-ignore lint/suspicious/noExplicitAny: any app's context
export function sendDirect(c: Context<any>, status: number, headers: string[], body: string | null): Response | undefined {
  const outgoing = nodeResponse(c);
  if (outgoing === undefined || outgoing.headersSent) return undefined;
  if (body !== null) headers.push("Content-Length", String(Buffer.byteLength(body)));
  outgoing.writeHead(status, headers);
  outgoing.end(body ?? undefined);
  return RESPONSE_ALREADY_SENT;
}

/** Whether `response` is the marker of an answer sendDirect already wrote. */
export function wasSentDirect(response: Response): boolean {
  return response === RESPONSE_ALREADY_SENT;
}
