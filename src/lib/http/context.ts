/**
 * Types of what the middleware chain puts on the request context (hono ContextVariableMap),
 * and the dependencies every handler reaches through `c.get("deps")`.
 */
import type { Logger } from "pino";
import type { Db } from "../../../db/connect.ts";
import type { ProjectSettings, ProjectTheme } from "../../../db/schema.ts";
import type { Config } from "../../config.ts";
import type { ContentChange, ContentRevisions, IdempotencyStore, RateLimiter, SharedAnswers } from "../../store/store.types.ts";
import type { AppCaches } from "../data/app-caches.ts";
import type { ReadDependencies } from "../data/read-dependencies.ts";
import type { Readiness } from "../data/readiness.ts";

/**
 * The per-request services (docs/architecture.md, "Per-request services"): every handler and
 * middleware reaches them through
 * `c.get("deps")`; nothing lives in module state, so two apps in one process (tests, or two
 * instances simulated in one) keep apart.
 */
export interface AppDeps {
  db: Db;
  config: Config;
  logger: Logger;
  rateLimiter: RateLimiter;
  /** Retires cached answers and lookups on every instance (the same adapter as rateLimiter). */
  contentRevisions: ContentRevisions;
  idempotencyStore: IdempotencyStore;
  /** Read answers shared by the instances (Redis); absent with the in-process stores. */
  sharedAnswers?: SharedAnswers;
  /** The app's in-process caches (src/lib/data/app-caches.ts). */
  caches: AppCaches;
  /** Current time; injectable so tests can move the clock. */
  now: () => Date;
  /**
   * Probes of the database and Redis behind GET /ready (src/lib/data/readiness.ts). Optional: without
   * it the route probes the database alone through `db` and reports Redis as not configured.
   */
  readiness?: Readiness;
  /**
   * The bundled demo project this process serves, with its embed key (src/server.ts): GET /demo
   * embeds the board widget on it (docs/contract/clients-v3.md, "The demo page"). Absent: /demo
   * answers 404.
   */
  demo?: { slug: string; embedKey: string };
  /**
   * Progress of the imports this process is running, by import id (src/routes/imports/imports.job.ts):
   * on the embedded database the job's transaction holds the one connection, so the routes read
   * progress from here. Absent: progress is read from the database only.
   */
  importProgress?: Map<string, { done: number; total: number | null }>;
}

/** The project a request addresses, as resolved by the api-key middleware. */
export interface ProjectContext {
  id: number;
  slug: string;
  name: string;
  description: string | null;
  logo_url: string | null;
  banner_url: string | null;
  currency_symbol: string;
  show_branding: boolean;
  is_private: boolean;
  plan: string;
  sso_secret: string | null;
  allowed_origins: string[];
  settings: ProjectSettings;
  theme: ProjectTheme;
}

export interface ApiKeyContext {
  id: number;
  kind: "secret" | "embed";
  projectId: number;
}

/** The voter identity on the request (contract, "Authentication" 5-8). */
export interface VoterContext {
  /** Internal row id (never sent). */
  id: number;
  /** voter_id as the API reports it. */
  publicId: string;
  kind: "anonymous" | "sso";
  displayName: string;
  banned: boolean;
}

/**
 * Who a keyed route serves: voters' clients (the public contract), the project's owner
 * (owner-api-v3.md, paths under /projects/{slug}/admin: secret key only, no voter identity), the
 * identity route (a voter's client that resolves its identity itself), or feed readers (the Atom
 * feeds of engagement-api-v3.md, "Feeds": public reads that also take the embed key as `?key=`).
 */
export type RouteAccess = "public" | "owner" | "identity" | "feed";

export interface AppEnv {
  Variables: {
    deps: AppDeps;
    requestId: string;
    /** "owner" on /projects/{slug}/admin/*, "identity" on /projects/{slug}/identity, "feed" on the Atom feeds (set in app.ts before the keyed chain); unset means public. */
    access: RouteAccess;
    project: ProjectContext;
    apiKey: ApiKeyContext;
    /** SHA-256 digest of the key the request presented (set by the api-key middleware). */
    keyHash: string;
    /** null when the request carries no identity (reads) or names an SSO user not yet seen. */
    voter: VoterContext | null;
    /**
     * The project's content revision as read with the rate-limit counter, or null when the
     * shared store did not answer (the shared read cache is then bypassed).
     */
    contentRevision: string | null;
    /** Set by a write handler that changed nothing any read shows (no new content revision). */
    contentUnchanged: boolean;
    /** Set by a write handler whose change is narrower than `all` (see read-dependencies.ts). */
    contentChange: ContentChange;
    /**
     * Set by an owner write that changes nothing the lookups hold but listing totals, which
     * follow the content revision (features.totals.ts): no lookups revision, no cache NOTIFY.
     */
    lookupsUnchanged: boolean;
    /** Set by a cached read's handler: what its answer shows (default `all`). */
    readDependencies: ReadDependencies;
    /** The status of an answer written straight to Node (sendDirect), for the log. */
    sentStatus: number;
    /** Scope of idempotency records: the voter, or the presented token digest on /identity. */
    idempotencyScope: string;
  };
}
