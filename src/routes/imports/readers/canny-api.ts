/**
 * Reading Canny's API itself (imports-v3.md, "Sources", Canny; transport and paging:
 * import-formats.md §2) into the zip of list answers the Canny reader reads, so both ways in
 * share one path. Every call is a POST with a JSON body carrying `apiKey`; v1 lists page with
 * `skip`/`limit` while `hasMore`, v2 comments and users with `cursor` while `hasNextPage`. At most
 * five requests start in any second; a 429 waits its `Retry-After` (at most MAX_RETRIES times in
 * a row). Requests go through the webhooks' address guard (`createGuardedFetch`). The key is
 * used for these requests only: never stored, logged, or put in an error (imports-v3.md rule 8).
 */
import http from "node:http";
import https from "node:https";
import { strToU8, zipSync } from "fflate";
import { pinnedLookup } from "../../../events/http-client.ts";
import { type HostResolver, hostOf, parseWebhookUrl, resolveWebhookHost, WebhookUrlRefused } from "../../../events/url-guard.ts";
import { MAX_IMPORT_RECORDS } from "./collector.ts";
import { isRecord } from "./files.ts";

/** Canny's API could not be read with the key given: the job fails with `validation_failed` naming `api_key`. */
export class ImportSourceError extends Error {
  readonly field = "api_key" as const;
  constructor(message: string) {
    super(message);
    this.name = "ImportSourceError";
  }
}

/** The part of an answer the reader uses (a WHATWG `Response` fits). */
export interface CannyFetchResponse {
  status: number;
  headers: { get(name: string): string | null };
  text(): Promise<string>;
}

/** A POST as the reader sends it; WHATWG `fetch` fits, the job passes `createGuardedFetch`'s. */
export type CannyFetch = (
  url: string,
  init: { method: "POST"; headers: Record<string, string>; body: string; signal?: AbortSignal },
) => Promise<CannyFetchResponse>;

/** Largest answer read (bytes); a list page is far smaller. */
const MAX_ANSWER_BYTES = 64 * 1024 * 1024;
/** No answer within this long fails the request. */
const REQUEST_TIMEOUT_MS = 60_000;

/**
 * A CannyFetch through the SSRF guard of webhooks (src/events/url-guard.ts): the URL must be
 * https (http too when `allowPrivate`, as WEBHOOK_ALLOW_PRIVATE_URLS allows), its host resolve to
 * public addresses only (unless `allowPrivate`), and the connection goes to the very address
 * checked. Redirects are not followed; answers over 64 MB fail.
 */
export function createGuardedFetch(options: { allowPrivate: boolean; resolve?: HostResolver }): CannyFetch {
  return async (text, init) => {
    const url = parseWebhookUrl(text, options.allowPrivate);
    const [address] = await resolveWebhookHost(
      url,
      options.resolve ? { allowPrivate: options.allowPrivate, resolve: options.resolve } : { allowPrivate: options.allowPrivate },
    );
    const body = Buffer.from(init.body);
    return await new Promise<CannyFetchResponse>((resolve, reject) => {
      const client = url.protocol === "https:" ? https : http;
      const req = client.request({
        method: init.method,
        protocol: url.protocol,
        host: hostOf(url),
        port: url.port === "" ? undefined : Number(url.port),
        path: `${url.pathname}${url.search}`,
        headers: { ...init.headers, "content-length": String(body.length) },
        lookup: pinnedLookup(address!),
        agent: false,
        timeout: REQUEST_TIMEOUT_MS,
        ...(init.signal ? { signal: init.signal } : {}),
        ...(url.protocol === "https:" ? { servername: hostOf(url) } : {}),
      });
      req.on("timeout", () => req.destroy(new Error(`no answer within ${REQUEST_TIMEOUT_MS / 1000} s`)));
      req.on("error", reject);
      req.on("response", (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on("data", (chunk: Buffer) => {
          size += chunk.length;
          if (size > MAX_ANSWER_BYTES) {
            req.destroy(new Error(`an answer over ${MAX_ANSWER_BYTES / (1024 * 1024)} MB`));
            return;
          }
          chunks.push(chunk);
        });
        res.on("error", reject);
        res.on("end", () => {
          const content = Buffer.concat(chunks).toString("utf8");
          resolve({
            status: res.statusCode ?? 0,
            headers: {
              get: (name) => {
                const value = res.headers[name.toLowerCase()];
                return Array.isArray(value) ? (value[0] ?? null) : (value ?? null);
              },
            },
            text: async () => content,
          });
        });
      });
      req.end(body);
    });
  };
}

export interface FetchCannyInput {
  /** The Canny secret key: sent in each body, never kept. */
  apiKey: string;
  /** CANNY_API_URL, e.g. `https://canny.io/api` (no trailing slash needed). */
  baseUrl: string;
  fetch: CannyFetch;
  signal?: AbortSignal;
  /** Told of each request (endpoint path and page number from 1, items so far), e.g. for progress. */
  onRequest?: (info: { endpoint: string; page: number; items: number }) => void;
}

/** Requests in any one second, and retries of one request answered 429. */
export const CANNY_REQUESTS_PER_SECOND = 5;
const MAX_RETRIES = 5;
/** Longest Retry-After honoured (seconds); longer fails the import rather than holding the job. */
const MAX_RETRY_AFTER_SECONDS = 120;
const PAGE_LIMIT = 100;

const LISTS: ReadonlyArray<{ file: string; endpoint: string; key: string; paging: "none" | "skip" | "cursor" }> = [
  { file: "boards.json", endpoint: "/v1/boards/list", key: "boards", paging: "none" },
  { file: "categories.json", endpoint: "/v1/categories/list", key: "categories", paging: "skip" },
  { file: "tags.json", endpoint: "/v1/tags/list", key: "tags", paging: "skip" },
  { file: "posts.json", endpoint: "/v1/posts/list", key: "posts", paging: "skip" },
  { file: "votes.json", endpoint: "/v1/votes/list", key: "votes", paging: "skip" },
  { file: "comments.json", endpoint: "/v2/comments/list", key: "items", paging: "cursor" },
  { file: "entries.json", endpoint: "/v1/entries/list", key: "entries", paging: "skip" },
  { file: "users.json", endpoint: "/v2/users/list", key: "users", paging: "cursor" },
  { file: "companies.json", endpoint: "/v1/companies/list", key: "companies", paging: "skip" },
];

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/** Seconds a 429 asks to wait: `Retry-After` as seconds or an HTTP date; 1 when absent or unreadable. */
function retryAfterSeconds(value: string | null): number {
  if (value === null) return 1;
  if (/^\d+$/.test(value.trim())) return Number(value.trim());
  const at = Date.parse(value);
  return Number.isNaN(at) ? 1 : Math.max(0, Math.ceil((at - Date.now()) / 1000));
}

/**
 * Reads every list of the Canny account behind `apiKey` and returns them as a zip of answers
 * (`boards.json` `{boards}`, ..., `comments.json` `{items, cursor: null, hasNextPage: false}`,
 * `users.json` `{users, cursor: null, hasNextPage: false}`), each list whole. Throws
 * ImportSourceError (naming `api_key`) when Canny answers an error, cannot be reached, or the
 * address guard refuses the URL; ImportSourceError too past 200,000 records.
 */
export async function fetchCannyExport(input: FetchCannyInput): Promise<Uint8Array> {
  const base = input.baseUrl.replace(/\/+$/, "");
  /** When the answers to the last requests arrived (performance.now()). */
  const answered: number[] = [];
  let total = 0;
  // Nothing the key could appear in leaves this function unredacted.
  const redact = (message: string) => (input.apiKey === "" ? message : message.split(input.apiKey).join("[redacted]"));

  const post = async (endpoint: string, body: Record<string, unknown>): Promise<Record<string, unknown> | unknown[]> => {
    for (let attempt = 0; ; attempt += 1) {
      // At most CANNY_REQUESTS_PER_SECOND in any second as Canny sees them: a request starts a second
      // after the answer to the fifth request before it arrived (that request reached Canny earlier still).
      if (answered.length >= CANNY_REQUESTS_PER_SECOND) {
        const wait = answered[answered.length - CANNY_REQUESTS_PER_SECOND]! + 1000 - performance.now();
        if (wait > 0) await sleep(wait + 5, input.signal);
      }
      let response: CannyFetchResponse;
      let content: string;
      try {
        response = await input.fetch(`${base}${endpoint}`, {
          method: "POST",
          headers: { "content-type": "application/json", accept: "application/json", "user-agent": "feedback-board-import/3" },
          body: JSON.stringify({ ...body, apiKey: input.apiKey }),
          ...(input.signal ? { signal: input.signal } : {}),
        });
        content = await response.text();
        answered.push(performance.now());
        if (answered.length > CANNY_REQUESTS_PER_SECOND) answered.shift();
      } catch (error) {
        if (input.signal?.aborted) throw error;
        const reason = error instanceof WebhookUrlRefused ? `the address is not allowed (${error.message})` : (error as Error).message;
        throw new ImportSourceError(redact(`Canny's API at ${base} could not be reached for ${endpoint}: ${reason}`));
      }
      if (response.status === 429) {
        const seconds = retryAfterSeconds(response.headers.get("retry-after"));
        if (attempt >= MAX_RETRIES || seconds > MAX_RETRY_AFTER_SECONDS) {
          throw new ImportSourceError(`Canny kept answering 429 (rate limited) to ${endpoint}; try again later`);
        }
        await sleep(seconds * 1000, input.signal);
        continue;
      }
      if (response.status < 200 || response.status >= 300) {
        let detail = "";
        try {
          const parsed = JSON.parse(content) as unknown;
          if (isRecord(parsed) && typeof parsed.error === "string") detail = `: ${parsed.error.slice(0, 200)}`;
        } catch {
          // Not JSON: the status alone says it.
        }
        throw new ImportSourceError(
          redact(
            `Canny answered HTTP ${response.status} to ${endpoint}${detail}${response.status === 401 || response.status === 403 ? " (check the API key)" : ""}`,
          ),
        );
      }
      try {
        const parsed = JSON.parse(content) as unknown;
        if (isRecord(parsed) || Array.isArray(parsed)) return parsed;
      } catch {
        // Falls through to the error below.
      }
      throw new ImportSourceError(`Canny answered ${endpoint} with something that is not a JSON object`);
    }
  };

  const listFrom = (answer: Record<string, unknown> | unknown[], endpoint: string, key: string): unknown[] => {
    const list = Array.isArray(answer) ? answer : answer[key];
    if (!Array.isArray(list)) throw new ImportSourceError(`Canny answered ${endpoint} without its "${key}" list`);
    total += list.length;
    if (total > MAX_IMPORT_RECORDS)
      throw new ImportSourceError(`the Canny account holds more than ${MAX_IMPORT_RECORDS} records (the bound of one import)`);
    return list;
  };

  const entries: Record<string, Uint8Array> = {};
  for (const { file, endpoint, key, paging } of LISTS) {
    const items: unknown[] = [];
    let page = 0;
    if (paging === "none") {
      input.onRequest?.({ endpoint, page: 1, items: 0 });
      items.push(...listFrom(await post(endpoint, {}), endpoint, key));
    } else if (paging === "skip") {
      for (;;) {
        page += 1;
        input.onRequest?.({ endpoint, page, items: items.length });
        const answer = await post(endpoint, { limit: PAGE_LIMIT, skip: items.length });
        const list = listFrom(answer, endpoint, key);
        items.push(...list);
        if (Array.isArray(answer) || answer.hasMore !== true || list.length === 0) break;
      }
    } else {
      let cursor: string | null = null;
      const seen = new Set<string>();
      for (;;) {
        page += 1;
        input.onRequest?.({ endpoint, page, items: items.length });
        const answer = await post(endpoint, cursor === null ? { limit: PAGE_LIMIT } : { limit: PAGE_LIMIT, cursor });
        items.push(...listFrom(answer, endpoint, key));
        const next = !Array.isArray(answer) && typeof answer.cursor === "string" && answer.cursor !== "" ? answer.cursor : null;
        if (Array.isArray(answer) || answer.hasNextPage !== true || next === null) break;
        if (seen.has(next))
          throw new ImportSourceError(`Canny answered ${endpoint} with a cursor it had given before (the list would never end)`);
        seen.add(next);
        cursor = next;
      }
    }
    const saved =
      paging === "cursor"
        ? { [key]: items, cursor: null, hasNextPage: false }
        : paging === "skip"
          ? { [key]: items, hasMore: false }
          : { [key]: items };
    entries[file] = strToU8(JSON.stringify(saved));
  }
  return zipSync(entries, { level: 6 });
}
