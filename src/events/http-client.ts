/**
 * One webhook HTTP request (owner-api-v3.md, "Webhooks": a 2xx answer within 15 s succeeds,
 * anything else fails, a redirect included). Bounded in every dimension a receiver controls:
 * - time: one deadline covers resolving, connecting, sending and the answer's headers, and a
 *   failure's excerpt is read only until the same deadline;
 * - memory: a 2xx answer's body is never read; of any other answer at most EXCERPT_BYTES are
 *   read before the connection is destroyed (Node's parser caps headers at 16 KiB);
 * - address: the connection goes to the address the SSRF guard checked (a `lookup` that answers
 *   with it), while the Host header and the TLS server name stay the URL's host;
 * - redirects are never followed (Node's client does not follow them).
 * No connection is reused (agent: false): each request is pinned to its own checked address.
 */
import http from "node:http";
import https from "node:https";
import type { LookupFunction } from "node:net";
import { hostOf, type ResolvedAddress } from "./url-guard.ts";

/** Bytes of a failed answer's body kept for the delivery log. */
export const EXCERPT_BYTES = 512;

export interface WebhookRequest {
  url: URL;
  /** The checked address to connect to. */
  address: ResolvedAddress;
  headers: Record<string, string>;
  body: string;
  /** Absolute deadline (ms since the epoch, Date.now()) of the whole request. */
  deadline: number;
  /** Cuts the request short (a worker stopping). */
  signal?: AbortSignal;
}

/** What one attempt came to. */
export interface WebhookResponse {
  /** HTTP status, or null when no answer arrived (timeout, refused connection, TLS error...). */
  statusCode: number | null;
  /** The Location of a redirect (3xx), when one was sent. */
  location?: string;
  /** Up to EXCERPT_BYTES of a non-2xx answer's body, as text. */
  excerpt?: string;
  /** Why no answer arrived (statusCode null). */
  error?: string;
}

/** A lookup that answers every query with `address` (the one the guard checked). */
export function pinnedLookup(address: ResolvedAddress): LookupFunction {
  return ((_hostname: string, options: { all?: boolean }, callback: (...args: unknown[]) => void) => {
    if (options?.all) callback(null, [{ address: address.address, family: address.family }]);
    else callback(null, address.address, address.family);
  }) as LookupFunction;
}

function describeError(error: unknown): string {
  if (error instanceof Error) {
    const code = (error as NodeJS.ErrnoException).code;
    return code && !error.message.includes(code) ? `${code}: ${error.message}` : error.message;
  }
  return String(error);
}

/**
 * POSTs `request.body` to `request.url` at `request.address`; resolves (never rejects) with the
 * status, or the error, by `request.deadline` at the latest.
 */
export function postWebhook(request: WebhookRequest): Promise<WebhookResponse> {
  return new Promise((resolve) => {
    const { url } = request;
    const client = url.protocol === "https:" ? https : http;
    const body = Buffer.from(request.body);
    const remaining = Math.max(0, request.deadline - Date.now());
    let settled = false;
    // What the deadline does: before an answer, a timeout; during a failed answer's body, end
    // the excerpt with what arrived.
    let onDeadline = () => finish({ statusCode: null, error: `no answer within ${Math.round(remaining / 100) / 10} s` });
    const timer = setTimeout(() => onDeadline(), remaining);
    const req = client.request({
      method: "POST",
      protocol: url.protocol,
      host: hostOf(url),
      port: url.port === "" ? undefined : Number(url.port),
      path: `${url.pathname}${url.search}`,
      headers: {
        ...request.headers,
        "content-type": "application/json",
        "content-length": String(body.length),
        "user-agent": "feedback-board-webhooks/3",
      },
      lookup: pinnedLookup(request.address),
      agent: false,
      // The certificate is checked against the URL's host name, not the address connected to.
      ...(url.protocol === "https:" ? { servername: hostOf(url) } : {}),
    });
    const onAbort = () => finish({ statusCode: null, error: "attempt interrupted: worker stopped" });
    function finish(result: WebhookResponse): void {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      request.signal?.removeEventListener("abort", onAbort);
      req.destroy();
      resolve(result);
    }
    req.on("error", (error) => finish({ statusCode: null, error: describeError(error) }));
    req.on("response", (res) => {
      const statusCode = res.statusCode ?? 0;
      if (statusCode >= 200 && statusCode < 300) {
        finish({ statusCode });
        return;
      }
      const location = typeof res.headers.location === "string" ? res.headers.location : undefined;
      const chunks: Buffer[] = [];
      let size = 0;
      const done = () => {
        const excerpt = Buffer.concat(chunks).subarray(0, EXCERPT_BYTES).toString("utf8");
        finish({ statusCode, ...(location ? { location } : {}), excerpt });
      };
      onDeadline = done;
      res.on("data", (chunk: Buffer) => {
        if (settled) return;
        chunks.push(chunk);
        size += chunk.length;
        if (size >= EXCERPT_BYTES) done();
      });
      res.on("end", done);
      res.on("error", done);
      res.on("aborted", done);
    });
    request.signal?.addEventListener("abort", onAbort, { once: true });
    if (request.signal?.aborted) onAbort();
    req.end(body);
  });
}
