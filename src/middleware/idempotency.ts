/**
 * Idempotency-Key on writes (contract, "Limits": idempotency rules). A record is scoped by
 * project and voter (idempotencyRecordScope; an erasure deletes the voter's, forgetVoterIdempotency)
 * and keyed within that by the key; the claim is atomic (one Redis script / in-process map) and its lock
 * expires after LOCK_SECONDS so a crashed request never blocks its retries for long. The finished
 * response (status, content type, exact body) is kept RETENTION_SECONDS and replayed with
 * Idempotent-Replay: true. The fingerprint is method + path + body digest (a multipart body's
 * bytes without its boundary, so a retried upload of the same fields and file matches and another
 * file does not): the same key on
 * another route, or with another body, answers 409 idempotency_mismatch; a replay while the
 * first request runs answers 409 idempotency_in_progress with Retry-After. 5xx responses are
 * not recorded, so a failed request may be retried with the same key. A request with no
 * identity at all (minting a voter on /identity) has no one to scope a record by: sharing one
 * would hand one client's fresh anon_token to another, so such requests are never replayed.
 *
 * The shared store failing (docs/architecture.md, "Data rules":
 * "a request whose claim cannot be made shared
 * does not run"; contract, "Errors": both answers are safe to retry):
 * - the claim or the read of the record fails: the handler does not run and nothing changes;
 *   409 idempotency_in_progress with Retry-After when the claim may have been made (timeout),
 *   500 internal when it certainly was not;
 * - writing the finished record fails: the work is done, so its answer is sent; the lock stays
 *   (replays meanwhile answer 409 idempotency_in_progress) and the store keeps writing the
 *   record in the background;
 * - releasing the lock after a 5xx fails: the lock expires by itself (409 until then).
 */
import { hash } from "node:crypto";
import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "../lib/http/context.ts";
import { ApiError } from "../lib/http/errors.ts";
import { type ClaimResult, type IdempotencyStore, IdempotencyStoreUnavailable } from "../store/store.types.ts";

export const IDEMPOTENCY_RETENTION_SECONDS = 24 * 60 * 60;
export const IDEMPOTENCY_LOCK_SECONDS = 15;
/** An Idempotency-Key is 1 to IDEMPOTENCY_KEY_MAX_LENGTH printable ASCII characters. */
export const IDEMPOTENCY_KEY_MAX_LENGTH = 200;
export const IDEMPOTENCY_KEY_PATTERN = /^[\x20-\x7e]+$/;

export function idempotencyMiddleware(): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const key = c.req.header("Idempotency-Key");
    if (key === undefined || c.req.method === "GET" || c.req.method === "HEAD") {
      await next();
      return;
    }
    if (key.length === 0 || key.length > IDEMPOTENCY_KEY_MAX_LENGTH || !IDEMPOTENCY_KEY_PATTERN.test(key)) {
      throw new ApiError("validation_failed", `Idempotency-Key must be 1 to ${IDEMPOTENCY_KEY_MAX_LENGTH} printable ASCII characters`, {
        field: "Idempotency-Key",
      });
    }
    if (c.get("idempotencyScope") === "none") {
      await next();
      return;
    }
    const store = c.get("deps").idempotencyStore;
    const fingerprint = `${c.req.method} ${c.req.path} ${await bodyDigest(c.req)}`;
    const recordKey = `${idempotencyRecordScope(c.get("project").id, c.get("idempotencyScope"))}:${hash("sha256", key, "hex")}`;

    let claim: ClaimResult;
    try {
      claim = await store.claim(recordKey, fingerprint, IDEMPOTENCY_LOCK_SECONDS);
    } catch (error) {
      throw refusal(error);
    }
    if (!claim.claimed) {
      const { record } = claim;
      if (record.fingerprint !== fingerprint) {
        throw new ApiError("idempotency_mismatch", "this Idempotency-Key was already used for a different request");
      }
      if (record.state === "running") throw inProgress();
      const { response } = record;
      for (const [name, value] of Object.entries(response.headers)) c.header(name, value);
      c.header("Idempotent-Replay", "true");
      return c.body(response.body, response.status as 200);
    }

    await next();
    if (c.res.status >= 500) {
      // Nothing was done (a 5xx rolls back): free the key for a retry. If the store does not
      // answer, the lock expires by itself and a retry meanwhile gets 409 in progress.
      await store.release(recordKey, claim.token).catch(() => {});
      return;
    }
    const stored = {
      status: c.res.status,
      headers: { "Content-Type": c.res.headers.get("Content-Type") ?? "application/json" },
      body: await c.res.clone().text(),
    };
    // The work is done and its answer goes out whatever the store says. On failure the lock is
    // kept, never released: a replay must not run the work again (the store retries the record).
    await store.complete(recordKey, claim.token, fingerprint, stored, IDEMPOTENCY_RETENTION_SECONDS).catch(() => {});
  };
}

/**
 * The store scope (idempotencyScopeOf, src/store/store.types.ts) of the records of project
 * `projectId` under request scope `scope` (a voter's public id, `token:<digest>` on /identity, or
 * `owner`): `<projectId>:<scope>`. Record keys are this, `:`, and the key's SHA-256 hex digest.
 */
export function idempotencyRecordScope(projectId: number, scope: string): string {
  return `${projectId}:${scope}`;
}

/**
 * Deletes, on the shared store (so for every instance), the idempotency records of voter
 * `voter` of project `projectId`: those scoped by its public id, and those of /identity scoped by
 * the digest of its anonymous token (`anonTokenHash`, the voters row's anon_token_hash: the same
 * SHA-256 hex the voter middleware scopes by), and stops any of its requests still running from
 * storing its answer (IdempotencyStore.forgetScope). For an erasure (owner-api-v3.md, Rules 3:
 * nothing stored names the voter). Resolves to the number of records deleted; throws
 * IdempotencyStoreUnavailable when the store did not answer.
 */
export async function forgetVoterIdempotency(
  store: IdempotencyStore,
  projectId: number,
  voter: { publicId: string; anonTokenHash: string | null },
): Promise<number> {
  let deleted = await store.forgetScope(idempotencyRecordScope(projectId, voter.publicId));
  if (voter.anonTokenHash !== null) deleted += await store.forgetScope(idempotencyRecordScope(projectId, `token:${voter.anonTokenHash}`));
  return deleted;
}

/**
 * SHA-256 of the body as the fingerprint sees it. A multipart body (an import's upload) is
 * binary: its bytes are hashed with its boundary taken out, since every client draws a new
 * boundary per request and a retry of the same fields and file must match; the bytes stay where
 * the handler reads them (the request caches its body once read).
 */
async function bodyDigest(request: {
  header(name: string): string | undefined;
  text(): Promise<string>;
  arrayBuffer(): Promise<ArrayBuffer>;
}) {
  const contentType = request.header("Content-Type") ?? "";
  if (!/^multipart\//i.test(contentType)) return hash("sha256", await request.text(), "hex");
  const boundary = /boundary="?([^";]+)"?/i.exec(contentType)?.[1];
  // latin1 maps each byte to one character and back, so nothing of the body is lost.
  const bytes = Buffer.from(await request.arrayBuffer()).toString("latin1");
  return hash("sha256", boundary ? bytes.replaceAll(boundary, "") : bytes, "hex");
}

function inProgress(): ApiError {
  return new ApiError("idempotency_in_progress", "an earlier request with this Idempotency-Key is still running", {
    headers: { "Retry-After": "1" },
  });
}

/**
 * The answer when the shared store did not answer the claim: the request does not run. Any
 * other error is rethrown (the error handler logs it and answers 500 internal).
 */
function refusal(error: unknown): unknown {
  if (!(error instanceof IdempotencyStoreUnavailable)) return error;
  return error.claimMayExist ? inProgress() : new ApiError("internal", "internal error; safe to retry");
}
