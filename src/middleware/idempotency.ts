/**
 * Idempotency-Key on writes (contract, "Limits": idempotency rules). A record is scoped by
 * project, voter and key; the claim is atomic (SET NX / in-process map) and its lock expires
 * after LOCK_SECONDS so a crashed request never blocks its retries for long. The finished
 * response (status, content type, exact body) is kept RETENTION_SECONDS and replayed with
 * Idempotent-Replay: true. The fingerprint is method + path + body digest: the same key on
 * another route, or with another body, answers 409 idempotency_mismatch; a replay while the
 * first request runs answers 409 idempotency_in_progress with Retry-After. 5xx responses are
 * not recorded, so a failed request may be retried with the same key. A request with no
 * identity at all (minting a voter on /identity) has no one to scope a record by: sharing one
 * would hand one client's fresh anon_token to another, so such requests are never replayed.
 */
import { hash } from "node:crypto";
import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "../lib/context.ts";
import { ApiError } from "../lib/errors.ts";

export const IDEMPOTENCY_RETENTION_SECONDS = 24 * 60 * 60;
export const IDEMPOTENCY_LOCK_SECONDS = 15;
const MAX_KEY_LENGTH = 200;
const PRINTABLE_ASCII = /^[\x20-\x7e]+$/;

export function idempotencyMiddleware(): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const key = c.req.header("Idempotency-Key");
    if (key === undefined || c.req.method === "GET" || c.req.method === "HEAD") {
      await next();
      return;
    }
    if (key.length === 0 || key.length > MAX_KEY_LENGTH || !PRINTABLE_ASCII.test(key)) {
      throw new ApiError("validation_failed", `Idempotency-Key must be 1 to ${MAX_KEY_LENGTH} printable ASCII characters`, {
        field: "Idempotency-Key",
      });
    }
    if (c.get("idempotencyScope") === "none") {
      await next();
      return;
    }
    const store = c.get("deps").idempotencyStore;
    const body = await c.req.text();
    const fingerprint = `${c.req.method} ${c.req.path} ${hash("sha256", body, "hex")}`;
    const recordKey = `${c.get("project").id}:${c.get("idempotencyScope")}:${hash("sha256", key, "hex")}`;

    const claim = await store.claim(recordKey, fingerprint, IDEMPOTENCY_LOCK_SECONDS);
    if (!claim.claimed) {
      const record = claim.record;
      if (record && record.fingerprint !== fingerprint) {
        throw new ApiError("idempotency_mismatch", "this Idempotency-Key was already used for a different request");
      }
      if (!record || record.state === "running") {
        throw new ApiError("idempotency_in_progress", "an earlier request with this Idempotency-Key is still running", {
          headers: { "Retry-After": "1" },
        });
      }
      const { response } = record;
      for (const [name, value] of Object.entries(response.headers)) c.header(name, value);
      c.header("Idempotent-Replay", "true");
      return c.body(response.body, response.status as 200);
    }

    await next();
    if (c.res.status >= 500) {
      await store.release(recordKey);
      return;
    }
    const stored = {
      status: c.res.status,
      headers: { "Content-Type": c.res.headers.get("Content-Type") ?? "application/json" },
      body: await c.res.clone().text(),
    };
    await store.complete(recordKey, fingerprint, stored, IDEMPOTENCY_RETENTION_SECONDS);
  };
}
