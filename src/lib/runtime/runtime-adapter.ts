/**
 * The library internals the hot path relies on, in one place (docs/architecture.md,
 * "Per-request services"). Each is something a library does not promise: runtime-adapter.test.ts
 * checks each
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
 * - @hono/node-server uses a request target and Host header of the common form verbatim as the
 *   request's URL, and hono takes the path from it as it is when it has no percent sign
 *   (`verbatimRequestTarget`): the hit path before the app (src/middleware/early-hit.ts) keys
 *   its lookup by the target as the app would.
 * - hono's HonoRequest caches each body reader's promise in `bodyCache` (`replaceBodyText`): the
 *   identity route reads an empty JSON body as `{}`, and the bytes the JSON shape check reads
 *   leave their text there too (`requestBodyBytes`), so that the validator's c.req.json() does
 *   not convert them through a web Response.
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

// fetch's Body.text() decodes so: UTF-8, a leading byte order mark dropped, bad bytes replaced.
const utf8 = new TextDecoder();
const utf8Encoder = new TextEncoder();

/**
 * The request body's bytes, read through hono (under Node, @hono/node-server reads them straight
 * off the message), with their text left in hono's body cache beside them: the validator's
 * c.req.json() reads the text, and given only the bytes hono would convert them through a web
 * Response, which @hono/node-server builds in full (about 0.1 ms of CPU a write). When a reader
 * before took the text (the idempotency fingerprint), the bytes are that text encoded again, for
 * the same reason. Rejects as c.req.arrayBuffer() does (a client gone mid-body).
 */
// biome-ignore lint/suspicious/noExplicitAny: any app's context
export async function requestBodyBytes(c: Context<any>): Promise<Uint8Array> {
  const cache = c.req.bodyCache as { arrayBuffer?: Promise<ArrayBuffer>; text?: Promise<string> };
  if (cache.arrayBuffer === undefined && cache.text !== undefined) return utf8Encoder.encode(await cache.text);
  const bytes = new Uint8Array(await c.req.arrayBuffer());
  cache.text ??= Promise.resolve(utf8.decode(bytes));
  return bytes;
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
 * Writes a whole answer onto Node's ServerResponse: `headers` as flat name/value pairs (merged
 * over those set with setHeader before), Content-Length added when there is a body. Returns
 * false, writing nothing, once headers went out.
 */
export function writeWhole(outgoing: ServerResponse, status: number, headers: string[], body: string | null): boolean {
  if (outgoing.headersSent) return false;
  if (body !== null) headers.push("Content-Length", String(Buffer.byteLength(body)));
  outgoing.writeHead(status, headers);
  outgoing.end(body ?? undefined);
  return true;
}

/**
 * Writes a whole answer straight onto Node's ServerResponse (writeWhole: `headers` merged over
 * those set with setResponseHeader) and returns the response that tells @hono/node-server it
 * was sent; undefined in-process or once headers went out (the caller then answers through hono).
 */
// biome-ignore lint/suspicious/noExplicitAny: any app's context
export function sendDirect(c: Context<any>, status: number, headers: string[], body: string | null): Response | undefined {
  const outgoing = nodeResponse(c);
  if (outgoing === undefined || !writeWhole(outgoing, status, headers, body)) return undefined;
  return RESPONSE_ALREADY_SENT;
}

// @hono/node-server's own tests of a request target and Host it uses verbatim (src/url.ts).
const VERBATIM_TARGET = /^\/[!#$&-;=?-[\]_a-z~]*$/;
const DOT_SEGMENT = /\/\.\.?(?:[/?#]|$)/;
const VERBATIM_HOST = /^[a-z0-9._-]+(?::(?:[1-5]\d{3,4}|[6-9]\d{3}))?$/;

/**
 * The request's target (path and query string) when @hono/node-server makes the request's URL
 * `http://<Host><target>` without parsing or changing either, and hono's path is the target up
 * to `?` (no percent sign to decode, no fragment); undefined for any other request (then only
 * the app knows what path and query it sees).
 */
export function verbatimRequestTarget(incoming: IncomingMessage): string | undefined {
  const target = incoming.url;
  const host = incoming.headers.host;
  if (target === undefined || host === undefined || !VERBATIM_HOST.test(host)) return undefined;
  if (!VERBATIM_TARGET.test(target) || DOT_SEGMENT.test(target) || target.includes("#")) return undefined;
  return target;
}

/** Whether `response` is the marker of an answer sendDirect already wrote. */
export function wasSentDirect(response: Response): boolean {
  return response === RESPONSE_ALREADY_SENT;
}
