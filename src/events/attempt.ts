/**
 * One delivery attempt, from a claimed row to its recorded outcome (owner-api-v3.md,
 * "Webhooks"): check the URL again (SSRF guard, at every delivery: a name can resolve
 * differently later), sign the stored body with the webhook's secrets, POST it to the address
 * checked, and record the answer: 2xx succeeded; 410 failed and the webhook disabled (gone);
 * anything else (a redirect, another status, no answer in time, a refused address) failed, with
 * a retry after the schedule's next delay unless the schedule is used up or it is a ping.
 */
import type { Kysely } from "kysely";
import type { Database } from "../../db/schema.ts";
import { type AttemptRecord, type ClaimedDelivery, type RecordedAttempt, recordAttempt, releaseClaims } from "./deliveries.repository.ts";
import { postWebhook, type WebhookResponse } from "./http-client.ts";
import { signDelivery, signingSecrets } from "./signing.ts";
import { type HostResolver, parseWebhookUrl, resolveWebhookHost, WebhookUrlRefused } from "./url-guard.ts";

/** What an attempt needs besides its row. */
export interface AttemptOptions {
  allowPrivate: boolean;
  timeoutSeconds: number;
  /** Delays before the 1st, 2nd... retry, in seconds (WEBHOOK_RETRY_SCHEDULE_SECONDS). */
  retrySchedule: readonly number[];
  disableAfter: number;
  resolve?: HostResolver;
  /** Random number in [0, 1) for jitter; injectable. */
  random?: () => number;
  /** Current time for the signature's timestamp. */
  now?: () => Date;
  /** Cuts the attempt short (a worker stopping): its claim is given back, nothing recorded. */
  signal?: AbortSignal;
}

/** Jitter applied to every retry delay: +-10 %, so that deliveries failed together spread out. */
const JITTER = 0.1;

/**
 * Seconds before the retry that follows failed attempt number `attempts` (1 = the first), or
 * null when none follows (the delivery is failed).
 */
export function retryDelaySeconds(attempts: number, schedule: readonly number[], random: () => number = Math.random): number | null {
  const delay = schedule[attempts - 1];
  if (delay === undefined) return null;
  return delay * (1 - JITTER + 2 * JITTER * random());
}

/** The delivery log's `last_error` for an answer (null for a success). */
export function describeResponse(response: WebhookResponse): string | null {
  if (response.statusCode === null) return response.error ?? "no answer";
  if (response.statusCode >= 200 && response.statusCode < 300) return null;
  const excerpt = response.excerpt?.trim() ? `: ${response.excerpt.trim().slice(0, 300)}` : "";
  if (response.statusCode >= 300 && response.statusCode < 400) {
    return `HTTP ${response.statusCode}: redirect${response.location ? ` to ${response.location.slice(0, 200)}` : ""} not followed`;
  }
  return `HTTP ${response.statusCode}${excerpt}`;
}

/** Sends one claimed delivery and says what came of it (no database access). */
export async function sendDelivery(
  delivery: ClaimedDelivery & { body: string },
  options: AttemptOptions,
): Promise<{ response: WebhookResponse; durationMs: number }> {
  const started = performance.now();
  const deadline = Date.now() + options.timeoutSeconds * 1000;
  try {
    const url = parseWebhookUrl(delivery.url, options.allowPrivate);
    const resolving = resolveWebhookHost(url, {
      allowPrivate: options.allowPrivate,
      ...(options.resolve ? { resolve: options.resolve } : {}),
    });
    let timer: NodeJS.Timeout | undefined;
    const addresses = await Promise.race([
      resolving,
      new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(new Error(`no answer within ${options.timeoutSeconds} s (resolving the host)`)),
          deadline - Date.now(),
        );
      }),
    ]).finally(() => clearTimeout(timer));
    const now = options.now?.() ?? new Date();
    const headers = signDelivery(signingSecrets(delivery, now), delivery.event_id, now, delivery.body);
    // The first address checked; every one was checked, so any would do.
    const response = await postWebhook({
      url,
      address: addresses[0]!,
      headers: { ...headers },
      body: delivery.body,
      deadline,
      ...(options.signal ? { signal: options.signal } : {}),
    });
    return { response, durationMs: performance.now() - started };
  } catch (error) {
    const message =
      error instanceof WebhookUrlRefused
        ? `${error.code === "url_not_allowed" ? "url_not_allowed" : "url invalid"}: ${error.message}`
        : String((error as Error).message ?? error);
    return { response: { statusCode: null, error: message }, durationMs: performance.now() - started };
  }
}

/** The record of an attempt that came to `response` (attempt number `delivery.attempts`). */
export function attemptRecord(
  delivery: Pick<ClaimedDelivery, "attempts" | "event_type">,
  response: WebhookResponse,
  durationMs: number,
  options: AttemptOptions,
): AttemptRecord {
  const succeeded = response.statusCode !== null && response.statusCode >= 200 && response.statusCode < 300;
  const gone = response.statusCode === 410;
  const retryInSeconds =
    succeeded || gone || delivery.event_type === "ping"
      ? null
      : retryDelaySeconds(delivery.attempts, options.retrySchedule, options.random);
  return { statusCode: response.statusCode, error: describeResponse(response), durationMs, retryInSeconds, succeeded, gone };
}

/**
 * Makes the attempt of a claimed delivery and records it. A ping claimed again after its
 * attempt was cut short (a crash during POST /test) is not retried: it is recorded failed; so is
 * a delivery whose event row is gone (nothing left to send).
 */
export async function attemptDelivery(
  db: Kysely<Database>,
  delivery: ClaimedDelivery,
  options: AttemptOptions,
): Promise<RecordedAttempt & { record: AttemptRecord }> {
  const interruptedPing = delivery.event_type === "ping" && delivery.attempts > 1;
  if (interruptedPing || delivery.body === null) {
    const record: AttemptRecord = {
      statusCode: null,
      error: interruptedPing ? "attempt interrupted; pings are not retried" : "the event is no longer stored; nothing sent",
      durationMs: 0,
      retryInSeconds: null,
      succeeded: false,
      gone: false,
    };
    return { ...(await recordAttempt(db, delivery.id, delivery.claim_token, record, options)), record };
  }
  const { response, durationMs } = await sendDelivery({ ...delivery, body: delivery.body }, options);
  if (options.signal?.aborted) {
    await releaseClaims(db, [delivery], "attempt interrupted: worker stopped");
    return { recorded: false, disabled: null, record: attemptRecord(delivery, response, durationMs, options) };
  }
  const record = attemptRecord(delivery, response, durationMs, options);
  return { ...(await recordAttempt(db, delivery.id, delivery.claim_token, record, options)), record };
}
