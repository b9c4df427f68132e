/**
 * Project key check (contract, "Authentication" 1-4): X-API-Key is looked up by its SHA-256
 * digest, the owner's plan must be PRO, an embed key sent with an Origin header must come from
 * the allowlist, and the key must belong to the project in the path. Sets `project` and `apiKey`.
 * Errors: missing_key, invalid_key (401); not_allowed, origin_not_allowed, key_wrong_project
 * (403); not_found (404) for an unknown or private project. An embed key from an allowlisted
 * origin is the only case that gets Access-Control-Allow-Origin (src/middleware/cors.ts). The
 * key lookup is the resolution service's (src/lib/data/resolution.ts), through the app's caches.
 *
 * Owner routes (owner-api-v3.md, "Common rules"): the embed key answers 403 not_allowed, and a
 * private project's owner routes work (its owner must reach them); every other check is the same.
 *
 * Feed routes (access "feed", engagement-api-v3.md "Feeds"): feed readers cannot send headers, so
 * the key may also come as the query parameter `key`. Only the embed key: a secret key there
 * answers 401 invalid_key (it would end up in readers' lists and logs), whether or not a header
 * is sent too. With both, the header is the key that authorizes; the query key is only checked
 * for being a secret key. On every other route `key` is an ordinary, ignored query parameter.
 */
import type { MiddlewareHandler } from "hono";
import type { FoundKey } from "../lib/data/resolution.repository.ts";
import { resolveKey, resolveProjectBySlug } from "../lib/data/resolution.ts";
import type { AppEnv } from "../lib/http/context.ts";
import { ApiError } from "../lib/http/errors.ts";
import { isRefusedDemoKey } from "../lib/rules/published-demo-keys.ts";
import { hashSecret } from "../lib/rules/secrets.ts";
import { setResponseHeader } from "../lib/runtime/runtime-adapter.ts";

/** Whether `origin` may ever match an allowlist and be named in Access-Control-Allow-Origin (the opaque origin `null` never). */
export function isNamableOrigin(origin: string | undefined): origin is string {
  return origin !== undefined && origin !== "" && origin !== "null";
}

type Context = Parameters<MiddlewareHandler<AppEnv>>[0];

/** What the key checks need to know of a request besides its key. */
export interface KeyRequest {
  /** An owner route (access "owner"). */
  owner: boolean;
  /** The Origin header, if sent. */
  origin: string | undefined;
  /** The project slug in the path (decoded); undefined on /board, which names none. */
  slugInPath: string | undefined;
}

/** What the key checks decide without another query (checkKey). */
export interface KeyCheck {
  /**
   * The origin to name in Access-Control-Allow-Origin: an embed key from an origin on its
   * project's allowlist. Set whatever `refusal` says, as the checks after the origin's still
   * answer through it.
   */
  allowOrigin?: string | undefined;
  /**
   * The first check that fails; "other-project" when the key belongs to another project than
   * the path names (which error that is depends on the named project: authorize looks it up).
   */
  refusal?: ApiError | "other-project";
}

/**
 * The contract's key checks on a looked-up key and its project, in the order the README states,
 * without I/O: both the app's key step (authorize) and the hit path before the app
 * (src/middleware/early-hit.ts) decide by it.
 */
export function checkKey(found: FoundKey | undefined, request: KeyRequest): KeyCheck {
  if (!found) return { refusal: new ApiError("invalid_key", "the API key does not exist or was regenerated") };
  const { key, project } = found;
  if (project.plan !== "pro") {
    return { refusal: new ApiError("not_allowed", "the API needs the PRO plan") };
  }
  if (request.owner && key.kind !== "secret") {
    return { refusal: new ApiError("not_allowed", "owner routes take the project's secret key, never the embed key") };
  }
  let allowOrigin: string | undefined;
  const origin = request.origin;
  if (key.kind === "embed" && origin !== undefined) {
    if (!isNamableOrigin(origin) || !project.allowed_origins.includes(origin)) {
      return { refusal: new ApiError("origin_not_allowed", "this origin is not on the project's allowlist for the embed key") };
    }
    // The one place a browser is let read the answer (src/middleware/cors.ts).
    allowOrigin = origin;
  }
  if (request.slugInPath !== undefined && request.slugInPath !== project.slug) return { allowOrigin, refusal: "other-project" };
  if (project.is_private && !request.owner) return { allowOrigin, refusal: new ApiError("not_found", "project not found") };
  return { allowOrigin };
}

/**
 * The key checks (checkKey) on a looked-up key and its project; sets `apiKey` and `project`.
 * Throws the ApiError of the first check that fails.
 */
async function authorize(c: Context, found: FoundKey | undefined): Promise<void> {
  const owner = c.get("access") === "owner";
  // Mounted on /projects/{slug}/* (the slug, decoded by hono) and on /board (none).
  const slugInPath = c.req.param("slug");
  const { allowOrigin, refusal } = checkKey(found, { owner, origin: c.req.header("Origin"), slugInPath });
  // Set for the whole request, so every answer from here on carries it, errors, 304 and cached
  // hits included.
  if (allowOrigin !== undefined) setResponseHeader(c, "Access-Control-Allow-Origin", allowOrigin);
  if (refusal === "other-project") {
    // A malformed slug (bad escape, NUL, ...) is never looked up: no project can have it.
    const other = await resolveProjectBySlug(c.get("deps"), slugInPath!);
    if (!other || other.is_private) throw new ApiError("not_found", "project not found");
    throw new ApiError("key_wrong_project", "the API key belongs to another project");
  }
  if (refusal !== undefined) throw refusal;
  c.set("apiKey", found!.key);
  c.set("project", found!.project);
}

/** A presented value, or undefined when absent or blank. */
export function given(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === "" ? undefined : value;
}

/** The `key` query parameter on a feed route; undefined elsewhere (there it is no key). */
function queryKey(c: Context): string | undefined {
  return c.get("access") === "feed" ? given(c.req.query("key")) : undefined;
}

/** Where a route takes its key besides X-API-Key: `Authorization: Bearer <key>` where `bearer` is set. */
export interface KeySources {
  bearer?: boolean;
}

const BEARER = /^Bearer\s+(\S+)\s*$/i;

/**
 * The key that authorizes the request: the X-API-Key header, else a feed route's `key` query
 * parameter, else (with `sources.bearer`) the token of an `Authorization: Bearer` header.
 * Throws 401 missing_key when there is none.
 */
export function presentedKey(c: Context, sources: KeySources = {}): string {
  const bearer = sources.bearer ? given(BEARER.exec(c.req.header("Authorization") ?? "")?.[1]) : undefined;
  const presented = given(c.req.header("X-API-Key")) ?? queryKey(c) ?? bearer;
  if (presented === undefined) {
    const feed = c.get("access") === "feed";
    throw new ApiError(
      "missing_key",
      feed
        ? "send the project key in the X-API-Key header, or the embed key as the key query parameter"
        : `send the project key in the X-API-Key header${sources.bearer ? " or as Authorization: Bearer <key>" : ""}`,
    );
  }
  return presented;
}

/** 401 invalid_key when a feed route's `key` query parameter is a secret key (of any project). */
async function refuseSecretKeyInQuery(c: Context): Promise<void> {
  const presented = queryKey(c);
  if (presented === undefined) return;
  const found = await resolveKey(c.get("deps"), hashSecret(presented));
  if (found?.key.kind === "secret") {
    throw new ApiError("invalid_key", "a secret key is never accepted in a URL; send it in the X-API-Key header, or use the embed key");
  }
}

/**
 * Authorizes the request again from a fresh lookup of its key, after the rate-limit step learned
 * that an owner changed the project's keys or settings since this process cached them
 * (owner-api-v3.md, Rules 7-8: the very next request on every instance sees the change).
 */
export async function reauthorizeFresh(c: Context): Promise<void> {
  await authorize(c, await resolveKey(c.get("deps"), c.get("keyHash")));
}

/**
 * The key check of apiKeyMiddleware on its own: sets `keyHash`, `apiKey` and `project`, or
 * throws the ApiError of the refusal. `sources` says where the route takes the key (default:
 * X-API-Key alone).
 */
export async function checkApiKey(c: Context, sources: KeySources = {}): Promise<void> {
  const deps = c.get("deps");
  await refuseSecretKeyInQuery(c);
  const keyHash = hashSecret(presentedKey(c, sources));
  c.set("keyHash", keyHash);
  if (isRefusedDemoKey(deps.config, keyHash)) throw new ApiError("invalid_key", "the API key does not exist or was regenerated");
  try {
    await authorize(c, await resolveKey(deps, keyHash));
  } catch (error) {
    // A refusal may come from a cached lookup an owner has just changed (a new allowlist, a
    // project made public): refuse only what a fresh lookup refuses too. Unknown keys are
    // never cached, so they cost no second query.
    if (!(error instanceof ApiError) || error.code === "invalid_key") throw error;
    await authorize(c, await resolveKey(deps, keyHash, { fresh: true }));
  }
}

/**
 * The key the request carries (as `sources` allow) when it is a key, secret or embed, of the
 * project its path names, whatever the checks would say of it; undefined when there is none, it
 * is unknown or a refused demo key, or it belongs to another project. Sets nothing.
 */
export async function keyOfPathProject(c: Context, sources: KeySources = {}): Promise<FoundKey | undefined> {
  const deps = c.get("deps");
  let presented: string;
  try {
    presented = presentedKey(c, sources);
  } catch (error) {
    if (error instanceof ApiError) return undefined;
    throw error;
  }
  const keyHash = hashSecret(presented);
  if (isRefusedDemoKey(deps.config, keyHash)) return undefined;
  const found = await resolveKey(deps, keyHash);
  return found !== undefined && found.project.slug === c.req.param("slug") ? found : undefined;
}

/** The key check; `sources` says where the route takes the key (default: X-API-Key alone). */
export function apiKeyMiddleware(sources: KeySources = {}): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    await checkApiKey(c, sources);
    await next();
  };
}
