/**
 * Test harness: one app per test file on the storage set-up the environment names. With
 * DATABASE_URL unset it is the embedded default (PGlite in memory, in-process stores); with
 * DATABASE_URL / REDIS_URL set (CI's second run) it is real Postgres + Redis, on the fresh
 * database test/support/global-setup.ts created for this run. Tests seed their own projects through
 * the snapshot importer with unique slugs and never rely on ids or order from another test.
 */
import { randomBytes } from "node:crypto";
import { inject } from "vitest";
import { type DatabaseHandle, openDatabase } from "../../db/connect.ts";
import { loadDemoSnapshot } from "../../src/admin/demo.ts";
import type { IdMap, SnapshotInput } from "../../src/admin/snapshot.schema.ts";
import { importSnapshot } from "../../src/admin/snapshot-import.ts";
import { createApp } from "../../src/app.ts";
import { type Config, parseConfig } from "../../src/config.ts";
import { createLogger, type OpenedDeps, openDeps } from "../../src/deps.ts";

import type { components, paths } from "../generated/api-types.ts";

/**
 * Untyped JSON, for files not yet converted: what they read answers and id maps as. Typed files
 * use `Answer<...>`, `Schemas[...]` and the snapshot schema's types instead.
 */
export type Json = any;

/**
 * Parts of a snapshot (snapshot spec) merged over buildSnapshot's: top-level sections, and
 * `project` merged one level deep. Deliberately loose: tests also import invalid snapshots.
 */
export type SnapshotParts = { project?: Record<string, unknown> } & Record<string, unknown>;

/** A snapshot import's ids by kind and ref (snapshot spec, "Id map"). */
export type Ids = IdMap["ids"];

/** The OpenAPI document's schemas (test/generated/api-types.ts, made by `npm run openapi`). */
export type Schemas = components["schemas"];
/** The error envelope of a public route (contract, "Errors"). */
export type ErrorAnswer = Schemas["ErrorEnvelope"];
/** The error envelope of an owner route (owner-api-v3.md, "Common rules"). */
export type OwnerErrorAnswer = Schemas["OwnerErrorEnvelope"];
type HttpMethod = "get" | "put" | "post" | "delete" | "patch";
type JsonContent<R> = R extends { content: { "application/json": infer B } } ? B : never;
/**
 * The JSON body the OpenAPI document gives the answer `S` (default 200) of `M` on path `P`, e.g.
 * `Answer<"/api/v3/projects/{slug}/features", "get">`: the envelope with its typed `data`.
 */
export type Answer<P extends keyof paths, M extends HttpMethod, S extends number = 200> = paths[P][M] extends {
  responses: infer R;
}
  ? S extends keyof R
    ? JsonContent<R[S]>
    : never
  : never;

export interface ImportedProject {
  slug: string;
  /**
   * The id map import printed (snapshot spec, "Id map"): an `IdMap`, read as Json until the
   * files not yet converted index it with `!` (noUncheckedIndexedAccess).
   */
  ids: Json;
  secretKey: string;
  embedKey: string;
}

export interface TestContext {
  app: ReturnType<typeof createApp>;
  deps: OpenedDeps;
  db: OpenedDeps["db"];
  /** Imports a snapshot built from `overrides` (see `buildSnapshot`) and returns its keys and ids. */
  importProject(overrides?: SnapshotParts): Promise<ImportedProject>;
  /** The app's clock (system time until a test pins it). */
  clock: TestClock;
  /** app.request with the key header set; `headers` adds or overrides. */
  get(path: string, key: string, headers?: Record<string, string>): Promise<Response>;
  send(method: string, path: string, key: string, body?: unknown, headers?: Record<string, string>): Promise<Response>;
  /**
   * What the admin command line does after an import or key regeneration (scripts/admin.ts):
   * new content and lookups revisions for project `slug` in the shared store, so every app's
   * very next request sees the change (the database notification may arrive later).
   */
  announceAdminChange(slug: string): Promise<void>;
  close(): Promise<void>;
}

/** The clock the app and its rate limiters read (AppDeps.now), which a test may stop. */
export interface TestClock {
  now(): Date;
  /** Stops the clock at `at` (a Date or Unix milliseconds) until release(). */
  pin(at: Date | number): void;
  /**
   * Budgets are counted in fixed windows (Unix time / `windowSeconds`): pins the clock one
   * second into the window the system clock is in, so that a burst is counted in one window
   * however long it takes, and returns that instant.
   */
  pinInsideWindow(windowSeconds?: number): Date;
  /** Follows the system clock again. */
  release(): void;
}

function createTestClock(): TestClock {
  let pinned: number | undefined;
  return {
    now: () => new Date(pinned ?? Date.now()),
    pin(at) {
      pinned = typeof at === "number" ? at : at.getTime();
    },
    pinInsideWindow(windowSeconds = 60) {
      const windowMs = windowSeconds * 1000;
      pinned = Math.floor(Date.now() / windowMs) * windowMs + 1000;
      return new Date(pinned);
    },
    release() {
      pinned = undefined;
    },
  };
}

/** A random slug no other test uses. */
export function uniqueSlug(prefix = "t"): string {
  return `${prefix}-${randomBytes(6).toString("hex")}`;
}

/** A random key of 40 printable characters. */
export function randomKey(kind: "sk" | "ek"): string {
  return `test_${kind}_${randomBytes(16).toString("hex")}`;
}

type InputBoard = NonNullable<SnapshotInput["boards"]>[number];
/** A roadmap column as buildSnapshot writes it: every field given. */
export type BuiltColumn = NonNullable<InputBoard["columns"]>[number] & {
  color: string | null;
  position: number;
  is_votable: boolean;
  status: string;
};
/**
 * A snapshot document as buildSnapshot writes it: a secret then an embed key, the roadmap first
 * among the boards, and the voters list present.
 */
export type BuiltSnapshot = Omit<SnapshotInput, "keys" | "boards" | "voters"> & {
  keys: [{ kind: "secret"; key: string }, { kind: "embed"; key: string }, ...NonNullable<SnapshotInput["keys"]>];
  boards: [Omit<InputBoard, "columns"> & { columns: BuiltColumn[] }, ...InputBoard[]];
  voters: NonNullable<SnapshotInput["voters"]>;
};

/**
 * A valid snapshot with a roadmap of five columns (c-open "Suggestions" open, c-planned,
 * c-progress in_progress, c-done, c-denied denied and not votable), a secret and an embed key,
 * with `overrides` merged over the top level (project is merged one level deep).
 */
export function buildSnapshot(overrides: SnapshotParts = {}): BuiltSnapshot {
  const { project, ...rest } = overrides;
  // Typed as valid although overrides may make it invalid: tests that import an invalid one
  // expect the importer to refuse it.
  return {
    format: "feedback-board-snapshot/1",
    project: { slug: uniqueSlug(), name: "Test project", allowed_origins: ["https://allowed.example"], ...project },
    keys: [
      { kind: "secret", key: randomKey("sk") },
      { kind: "embed", key: randomKey("ek") },
    ],
    boards: [
      {
        ref: "roadmap",
        kind: "roadmap",
        name: "Roadmap",
        slug: "roadmap",
        columns: [
          { ref: "c-open", name: "Suggestions", color: "#9ca3af", position: 0, is_votable: true, status: "open" },
          { ref: "c-planned", name: "Planned", color: "#3b82f6", position: 1, is_votable: true, status: "planned" },
          { ref: "c-progress", name: "In progress", color: "#f59e0b", position: 2, is_votable: true, status: "in_progress" },
          { ref: "c-done", name: "Done", color: "#10b981", position: 3, is_votable: false, status: "done" },
          { ref: "c-denied", name: "Declined", color: null, position: 4, is_votable: false, status: "denied" },
        ],
      },
    ],
    voters: [],
    ...rest,
  } as BuiltSnapshot;
}

/**
 * The embedded database of this test process. Starting PGlite compiles Postgres from WASM
 * (seconds of CPU), so test files run unisolated (vitest.config.ts) and share one migrated
 * instance per process; tests stay independent through their own projects and slugs.
 */
/**
 * The bundled demo project under a fresh slug and fresh keys, its voters' anonymous tokens
 * dropped (tokens are unique across projects, and several tests import the demo).
 */
export function demoSnapshotForTest(): { snapshot: SnapshotInput; slug: string; secretKey: string; embedKey: string } {
  const demo = loadDemoSnapshot();
  const slug = uniqueSlug("demo");
  const secretKey = randomKey("sk");
  const embedKey = randomKey("ek");
  const snapshot = {
    ...demo,
    project: { ...demo.project, slug },
    keys: [
      { kind: "secret" as const, key: secretKey },
      { kind: "embed" as const, key: embedKey },
    ],
    voters: demo.voters.map((voter) => ({ ...voter, anon_token: null })),
  };
  return { snapshot, slug, secretKey, embedKey };
}

let sharedPglite: Promise<DatabaseHandle> | undefined;

async function openTestDatabase(config: Config): Promise<{ handle: DatabaseHandle; owned: boolean }> {
  if (config.DATABASE_URL) {
    // The session bounds the server sets (src/deps.ts), from the same config.
    const limits = {
      lockTimeoutMs: config.DATABASE_LOCK_TIMEOUT_MS,
      statementTimeoutMs: config.DATABASE_STATEMENT_TIMEOUT_MS,
      idleInTransactionTimeoutMs: config.DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS,
    };
    return { handle: await openDatabase({ DATABASE_URL: config.DATABASE_URL, poolSize: 5, limits }), owned: true };
  }
  // openDeps migrates it.
  sharedPglite ??= openDatabase({ PGLITE_DIR: "memory://" });
  return { handle: await sharedPglite, owned: false };
}

/**
 * Opens the database, stores and app for one test file, with the server's own openDeps
 * (src/deps.ts) so that every dependency and setting reaches tests as it reaches the server.
 * `configOverrides` are environment variables over the test defaults (huge rate budgets,
 * silent logs) and over the storage set-up the environment names; `logDestination` receives
 * every log line (JSON text) instead of standard output.
 */
export async function createTestContext(
  configOverrides: Record<string, string> = {},
  options: { logDestination?: { write(line: string): void } } = {},
): Promise<TestContext> {
  const databaseUrl = process.env.DATABASE_URL ? (inject("testDatabaseUrl") as string) : undefined;
  const config = parseConfig({
    LOG_LEVEL: "silent",
    PGLITE_DIR: "memory://",
    RATE_LIMIT_READS_PER_MINUTE: "100000",
    RATE_LIMIT_WRITES_PER_MINUTE: "100000",
    RATE_LIMIT_EMBED_READS_PER_MINUTE: "100000",
    RATE_LIMIT_EMBED_WRITES_PER_MINUTE: "100000",
    ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
    ...(process.env.REDIS_URL ? { REDIS_URL: process.env.REDIS_URL, REDIS_KEY_PREFIX: `fbtest:${randomBytes(6).toString("hex")}:` } : {}),
    ...configOverrides,
  });
  const { handle, owned } = await openTestDatabase(config);
  const clock = createTestClock();
  const deps = await openDeps(config, createLogger(config.LOG_LEVEL, options.logDestination), { database: handle, now: () => clock.now() });
  const app = createApp(deps);
  const db = handle.db;
  return {
    app,
    deps,
    db,
    clock,
    async importProject(overrides = {}) {
      const snapshot = buildSnapshot(overrides);
      const ids = await importSnapshot(db, snapshot, {});
      const keys = snapshot.keys;
      return {
        slug: snapshot.project.slug,
        ids,
        secretKey: keys.find((k) => k.kind === "secret")?.key ?? "",
        embedKey: keys.find((k) => k.kind === "embed")?.key ?? "",
      };
    },
    async get(path, key, headers = {}) {
      return app.request(path, { headers: { "X-API-Key": key, ...headers } });
    },
    async send(method, path, key, body, headers = {}) {
      return app.request(path, {
        method,
        headers: { "X-API-Key": key, ...(body === undefined ? {} : { "Content-Type": "application/json" }), ...headers },
        body: body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body),
      });
    },
    async announceAdminChange(slug) {
      const project = await db.selectFrom("projects").select("id").where("slug", "=", slug).executeTakeFirstOrThrow();
      await deps.contentRevisions.bump(project.id, { lookups: true });
    },
    async close() {
      await deps.close();
      if (owned) await handle.close();
    },
  };
}

/**
 * Parses a response body, asserting nothing. Name its type (`Answer<...>`, `ErrorAnswer`) to
 * have what a test reads checked against the OpenAPI document.
 */
export async function body<T = Json>(response: Response): Promise<T> {
  return (await response.json()) as T;
}
