/**
 * The fetch the generated SDK calls through: safe retries and conditional reads
 * (docs/contract/clients-v3.md, "The TypeScript client": "Safe retries", "Conditional reads").
 * Every answer it hands back is 2xx; anything else is thrown as a FeedbackBoardError.
 */
import { FeedbackBoardError } from "./errors.js";

/** Retry policy: `attempts` extra tries at most (default 3), `maxDelayMs` of waiting in all (default 10,000). */
export interface RetryOptions {
  attempts?: number;
  maxDelayMs?: number;
}

export const DEFAULT_RETRY = { attempts: 3, maxDelayMs: 10_000 } as const;

/** First backoff step; the n-th retry waits up to BASE_DELAY_MS * 2^n (halved at random, "jitter"). */
const BASE_DELAY_MS = 200;
/** Conditional reads kept at most; the oldest is dropped first. */
const ETAG_ENTRIES = 500;

interface Kept {
  etag: string;
  body: string;
  status: number;
  headers: [string, string][];
}

/**
 * A fetch for the SDK. `request` may be retried only when it is safe to repeat: a GET/HEAD, or a
 * write carrying an Idempotency-Key (every attempt sends the same request, so the same key).
 * Retried: no answer, 429, 5xx and 409 idempotency_in_progress; after Retry-After when sent, else
 * after an exponential backoff with jitter; never once the waits would pass `maxDelayMs` in all.
 * With `etagCache`, a GET is sent with the If-None-Match of its last 200 and a 304 answers that
 * kept body. Throws FeedbackBoardError for the final non-2xx answer or network failure.
 */
export function createTransport(options: {
  fetch: typeof fetch;
  retry: Required<RetryOptions>;
  etagCache: boolean;
}): (request: Request) => Promise<Response> {
  const kept = new Map<string, Kept>();

  return async (request: Request) => {
    const method = request.method.toUpperCase();
    const repeatable = method === "GET" || method === "HEAD" || request.headers.has("Idempotency-Key");
    const cacheKey = options.etagCache && method === "GET" ? cacheKeyOf(request) : null;
    const cached = cacheKey === null ? undefined : kept.get(cacheKey);
    if (cached) request.headers.set("If-None-Match", cached.etag);

    let waited = 0;
    for (let attempt = 0; ; attempt++) {
      let response: Response | undefined;
      let failure: unknown;
      try {
        response = await options.fetch(request.clone());
      } catch (error) {
        failure = error;
      }
      if (response?.status === 304 && cached) {
        return new Response(cached.body, { status: cached.status, headers: cached.headers });
      }
      if (response?.ok) {
        if (cacheKey !== null) await keep(kept, cacheKey, response);
        return response;
      }
      const error = response ? await FeedbackBoardError.fromResponse(response.clone()) : FeedbackBoardError.network(failure);
      if (!repeatable || attempt >= options.retry.attempts || !isTransient(error)) throw error;
      const delay = error.retryAfter !== null ? error.retryAfter * 1000 : backoff(attempt);
      if (waited + delay > options.retry.maxDelayMs) throw error;
      await response?.body?.cancel().catch(() => {});
      await new Promise((resolve) => setTimeout(resolve, delay));
      waited += delay;
    }
  };
}

function isTransient(error: FeedbackBoardError): boolean {
  return (
    error.status === 0 || error.status === 429 || error.status >= 500 || (error.status === 409 && error.code === "idempotency_in_progress")
  );
}

function backoff(attempt: number): number {
  const ceiling = BASE_DELAY_MS * 2 ** attempt;
  return Math.round(ceiling / 2 + Math.random() * (ceiling / 2));
}

/** One cached read per URL and per caller (key and voter headers change what the answer says). */
function cacheKeyOf(request: Request): string {
  const who = ["X-API-Key", "X-VF-Anon", "X-VF-Token"].map((name) => request.headers.get(name) ?? "").join("\n");
  return `${request.url}\n${who}`;
}

async function keep(kept: Map<string, Kept>, key: string, response: Response): Promise<void> {
  const etag = response.headers.get("ETag");
  if (etag === null || response.status !== 200) return;
  kept.delete(key);
  kept.set(key, { etag, body: await response.clone().text(), status: response.status, headers: [...response.headers] });
  if (kept.size > ETAG_ENTRIES) kept.delete(kept.keys().next().value!);
}
