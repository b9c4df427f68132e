/**
 * The hit path before the app (docs/architecture.md, "The request path"; its cost:
 * docs/benchmarks.md, "Targets", cached hits): a
 * Node request listener in front of the app's that answers a cached public read without
 * building a Request, a hono context or running the middleware chain. Everything else, and any
 * request it is unsure of, goes to the app unchanged.
 *
 * It takes a request only when all of this holds before any I/O (else the app gets it, nothing
 * counted): GET; no identity header (X-VF-Token, X-VF-Anon) and no body framing; an X-API-Key
 * whose digest is in this process's key cache and that the key checks accept (checkKey, as the
 * app's key step: plan, Origin against the embed key's allowlist, the slug the path names, a
 * private project); a target @hono/node-server and hono use as sent (verbatimRequestTarget) under
 * which the shared read cache holds an answer built for a plain keyed read (not an owner,
 * identity or feed route) and not past its expiry. Then it makes the request's one count against
 * the read budget with the revisions (countRequest, the app's own rate step) and answers only
 * when the count is allowed, the lookups revision is the one this process saw last, and the
 * entry is current at the content revision (currentHit, the app's hit step). Otherwise it hands
 * the count to the app (handOverCount), whose rate step takes it instead of counting again: 429,
 * a lookups change, a stale entry and a store outage are answered by the app, counted once.
 *
 * The answer is the app's hit answer (hitAnswer: 200 with the body, or 304 on a matching
 * If-None-Match) with the headers the app's steps put on it, in the same order: the static
 * headers (apiStaticHeaders), X-Request-Id (requestIdOf), Access-Control-Allow-Origin (from
 * checkKey), the rate headers (rateHeaderValues); plus the same log record (logRequest).
 * test/early-hit.test.ts compares both paths' answers over HTTP.
 */
import type { IncomingMessage, RequestListener, ServerResponse } from "node:http";
import type { ApiKeyContext, AppDeps } from "../lib/http/context.ts";
import { isRefusedDemoKey } from "../lib/rules/published-demo-keys.ts";
import { hashSecret } from "../lib/rules/secrets.ts";
import { verbatimRequestTarget, writeWhole } from "../lib/runtime/runtime-adapter.ts";
import { checkKey, given } from "./api-key.ts";
import { type CountedRequest, countRequest, handOverCount, rateHeaderValues } from "./rate-limit.ts";
import { logRequest, requestIdOf } from "./request-id.ts";
import { currentHit, earlyHitCandidate, hitAnswer } from "./shared-read-cache.ts";
import { apiStaticHeaders } from "./static-headers.ts";

/** The listener answering early hits of the app served by `app` (its Node listener), for `deps`. */
export function earlyHitListener(deps: AppDeps, app: RequestListener): RequestListener {
  // The static headers as flat name/value pairs, once resolved; until then every request goes to the app.
  let staticPairs: string[] | undefined;
  void apiStaticHeaders().then((list) => {
    staticPairs = list.flat();
  });

  /** Answers a request the synchronous checks took: counts it, then answers it or hands it over. */
  async function answerCounted(
    incoming: IncomingMessage,
    outgoing: ServerResponse,
    key: ApiKeyContext,
    projectId: number,
    target: string,
    allowOrigin: string | undefined,
    started: number,
  ): Promise<void> {
    let counted: CountedRequest | undefined;
    try {
      counted = await countRequest(deps, key, projectId, true);
      const { rate, revisions } = counted;
      const entry =
        rate.allowed && revisions !== null && deps.caches.seenLookupRevisions.isSeen(projectId, revisions.lookups)
          ? await currentHit(deps, projectId, target, revisions.content)
          : undefined;
      if (entry !== undefined && !outgoing.headersSent) {
        deps.caches.readStats.early++;
        const headers = incoming.headers;
        const answer = hitAnswer(entry, headers["if-none-match"] ?? null);
        const requestId = requestIdOf(headers["x-request-id"] as string | undefined);
        const [limit, remaining, reset] = rateHeaderValues(rate);
        const pairs = [...staticPairs!, "X-Request-Id", requestId];
        if (allowOrigin !== undefined) pairs.push("Access-Control-Allow-Origin", allowOrigin);
        pairs.push("X-RateLimit-Limit", limit, "X-RateLimit-Remaining", remaining, "X-RateLimit-Reset", reset, ...answer.headers);
        writeWhole(outgoing, answer.status, pairs, answer.body);
        const queryAt = target.indexOf("?");
        logRequest(deps.logger, requestId, "GET", queryAt < 0 ? target : target.slice(0, queryAt), answer.status, started);
        return;
      }
    } catch (error) {
      deps.logger.error({ err: error }, "early hit path failed");
      if (outgoing.headersSent) {
        if (!outgoing.writableEnded) outgoing.destroy();
        return;
      }
    }
    // The app answers it, counting it only if it was not counted here.
    if (counted !== undefined) handOverCount(incoming, counted);
    app(incoming, outgoing);
  }

  return (incoming, outgoing) => {
    const started = performance.now();
    if (staticPairs === undefined || incoming.method !== "GET") return app(incoming, outgoing);
    const headers = incoming.headers;
    if (headers["x-vf-token"] !== undefined || headers["x-vf-anon"] !== undefined) return app(incoming, outgoing);
    if (headers["content-length"] !== undefined || headers["transfer-encoding"] !== undefined) return app(incoming, outgoing);
    const presented = given(headers["x-api-key"] as string | undefined);
    const target = presented === undefined ? undefined : verbatimRequestTarget(incoming);
    if (presented === undefined || target === undefined) return app(incoming, outgoing);
    const keyHash = hashSecret(presented);
    const found = isRefusedDemoKey(deps.config, keyHash) ? undefined : deps.caches.keys.get([keyHash]);
    if (found === undefined) return app(incoming, outgoing);
    const projectId = found.project.id;
    const slug = earlyHitCandidate(deps, projectId, target)?.plainRead?.slug;
    if (slug === undefined) return app(incoming, outgoing);
    const { allowOrigin, refusal } = checkKey(found, { owner: false, origin: headers.origin, slugInPath: slug ?? undefined });
    if (refusal !== undefined) return app(incoming, outgoing);
    void answerCounted(incoming, outgoing, found.key, projectId, target, allowOrigin, started);
  };
}
