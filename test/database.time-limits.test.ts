/**
 * Database session bounds (docs/operations.md, "Database time limits"; src/config.ts DATABASE_*_MS): a write
 * blocked by a row lock that another session holds gives up after the lock or statement bound and
 * answers the contract's retryable error (contract, "Errors": 500 internal, safe to retry) with
 * nothing written, and its Idempotency-Key is free for the retry; a holder that stays idle in its
 * transaction is ended by Postgres, which lets the blocked write through. The other session is a
 * plain connection of this test standing for a stalled instance. Postgres only: PGlite has one
 * connection, so no other session can hold a lock (the bounds do not apply to it).
 */
import { sql } from "kysely";
import postgres from "postgres";
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from "vitest";
import { LOCK_BOUND_COMMENT } from "../db/prepared-statement-client.ts";
import { TIME_LIMIT_MESSAGE } from "../src/app.ts";
import { LOCK_CLASS } from "../src/lib/data/project-write-lock.ts";
import { createTestContext, type ImportedProject, type SnapshotParts, type TestContext, uniqueSlug } from "./support/harness.ts";
import { inOtherSession, waitForLockWaiter } from "./support/lock-waiter.ts";

const onPostgres = Boolean(process.env.DATABASE_URL);
const LOCK_MS = 400;

/** A project with one open feature and two anonymous voters. */
function snapshot(): SnapshotParts {
  const slug = uniqueSlug("limits");
  return {
    project: { slug },
    voters: ["ada", "bob"].map((ref) => ({ ref, anon_token: `anon-${ref}-${slug}` })),
    features: [{ ref: "f", board: "roadmap", column: "c-open", heading: "Locked feature" }],
  };
}

/** A session of its own (standing for another instance) that row-locks the feature until released. */
async function holdFeatureLock(featureId: number, parameters: Record<string, string> = {}) {
  const client = postgres(inject("testDatabaseUrl") as string, { max: 1, onnotice: () => {}, connection: parameters });
  const session = await client.reserve();
  await session`BEGIN`;
  await session`SELECT id FROM features WHERE id = ${featureId} FOR UPDATE`;
  return {
    async release() {
      await session`ROLLBACK`.catch(() => {});
      session.release();
      await client.end({ timeout: 1 });
    },
  };
}

describe.skipIf(!onPostgres)("a write blocked by another session's row lock", () => {
  const contexts: TestContext[] = [];
  const held: { release(): Promise<void> }[] = [];

  afterEach(async () => {
    await Promise.all(held.splice(0).map((holder) => holder.release()));
  });
  afterAll(async () => {
    await Promise.all(contexts.map((context) => context.close()));
  });

  async function setUp(config: Record<string, string>) {
    const ctx = await createTestContext(config);
    contexts.push(ctx);
    const project = await ctx.importProject(snapshot());
    const featureId: number = project.ids.ids.features.f;
    const vote = (voter: string, idempotencyKey: string) =>
      ctx.send("POST", `/api/v3/projects/${project.slug}/features/${featureId}/vote`, project.secretKey, undefined, {
        "X-VF-Anon": `anon-${voter}-${project.slug}`,
        "Idempotency-Key": idempotencyKey,
      });
    return { ctx, project, featureId, vote };
  }

  /** The feature's stored counter and its vote rows. */
  async function tally(ctx: TestContext, project: ImportedProject) {
    const row = await sql<{ vote_count: number; rows: number }>`SELECT f.vote_count,
        (SELECT count(*)::int FROM votes v WHERE v.feature_id = f.id) AS rows
      FROM features f WHERE f.id = ${project.ids.ids.features.f}`.execute(ctx.db);
    return row.rows[0];
  }

  async function expectRefusedThenRetried(config: Record<string, string>, boundMs: number) {
    const { ctx, project, featureId, vote } = await setUp(config);
    const holder = await holdFeatureLock(featureId);
    held.push(holder);
    const started = performance.now();
    const refused = await vote("ada", "limits-key-1");
    const waited = performance.now() - started;
    const body = await refused.json();
    expect(refused.status).toBe(500);
    expect(body.error).toMatchObject({ code: "internal", message: TIME_LIMIT_MESSAGE });
    expect(refused.headers.get("X-Request-Id")).toBeTruthy();
    expect(waited).toBeGreaterThanOrEqual(boundMs - 50);
    expect(waited).toBeLessThan(boundMs + 2000);
    expect(await tally(ctx, project)).toEqual({ vote_count: 0, rows: 0 });

    await holder.release();
    // Same Idempotency-Key: the refused attempt left no record, so the vote runs now.
    const retried = await vote("ada", "limits-key-1");
    expect(retried.status).toBe(200);
    expect(retried.headers.get("Idempotent-Replay")).toBeNull();
    expect(await tally(ctx, project)).toEqual({ vote_count: 1, rows: 1 });
  }

  it("answers 500 internal after the lock bound (55P03), writes nothing, and the same key retries", async () => {
    await expectRefusedThenRetried({ DATABASE_LOCK_TIMEOUT_MS: String(LOCK_MS), DATABASE_STATEMENT_TIMEOUT_MS: "10000" }, LOCK_MS);
  });

  it("answers 500 internal after the statement bound (57014) when no lock bound is set", async () => {
    await expectRefusedThenRetried({ DATABASE_LOCK_TIMEOUT_MS: "0", DATABASE_STATEMENT_TIMEOUT_MS: String(LOCK_MS) }, LOCK_MS);
  });

  it("bounds an owner edit queued behind another waiter by the lock bound in all, not once per lock it waits for", async () => {
    // Postgres takes a row lock in two waits (the row's place in the queue, then the holder's
    // transaction), lock_timeout bounding each: the second edit waits for the first waiter's
    // place, then for the holder, and would answer after nearly twice the bound.
    const lockMs = 1000;
    const { ctx, project, featureId } = await setUp({ DATABASE_LOCK_TIMEOUT_MS: String(lockMs), DATABASE_STATEMENT_TIMEOUT_MS: "10000" });
    const edit = (description: string) =>
      ctx.send(
        "PATCH",
        `/api/v3/projects/${project.slug}/admin/features/${featureId}`,
        project.secretKey,
        { description },
        {
          "Idempotency-Key": description,
        },
      );
    const description = () => ctx.db.selectFrom("features").select("description").where("id", "=", featureId).executeTakeFirstOrThrow();
    const before = await description();
    const holder = await holdFeatureLock(featureId);
    held.push(holder);
    const timed = async (description: string) => {
      const started = performance.now();
      const response = await edit(description);
      return { response, waited: performance.now() - started };
    };
    const first = timed("queued-first");
    await inOtherSession((session) => waitForLockWaiter(session, `${LOCK_BOUND_COMMENT}select`, "the first edit"));
    const second = timed("queued-second");
    for (const { response, waited } of [await first, await second]) {
      expect(response.status).toBe(500);
      expect((await response.json()).error).toMatchObject({ code: "internal", message: TIME_LIMIT_MESSAGE });
      expect(waited).toBeLessThan(lockMs + 500);
    }
    expect(await description()).toEqual(before);

    await holder.release();
    // The bound ended with the refused transactions: the same key runs now.
    const retried = await edit("queued-second");
    expect(retried.status).toBe(200);
    expect((await retried.json()).data.description).toBe("queued-second");
  });

  it("goes through once Postgres ends a holder idle in its transaction (idle_in_transaction_session_timeout)", async () => {
    const { ctx, project, featureId, vote } = await setUp({ DATABASE_LOCK_TIMEOUT_MS: "5000" });
    const holder = await holdFeatureLock(featureId, { idle_in_transaction_session_timeout: String(LOCK_MS) });
    held.push(holder);
    const started = performance.now();
    const response = await vote("bob", "limits-key-2");
    const waited = performance.now() - started;
    expect(response.status).toBe(200);
    expect(waited).toBeLessThan(LOCK_MS + 2000);
    expect(await tally(ctx, project)).toEqual({ vote_count: 1, rows: 1 });
  });
});

describe.skipIf(!onPostgres)("a write racing a replace that outlasts the bounds", () => {
  let ctx: TestContext;
  beforeAll(async () => {
    ctx = await createTestContext({ DATABASE_LOCK_TIMEOUT_MS: "200", DATABASE_STATEMENT_TIMEOUT_MS: "300" });
  });
  afterAll(() => ctx?.close());

  it("waits for the replace and succeeds (snapshot spec, Restores: none gets a 500)", async () => {
    const project = await ctx.importProject(snapshot());
    const featureId: number = project.ids.ids.features.f;
    const projectId = (await ctx.db.selectFrom("projects").select("id").where("slug", "=", project.slug).executeTakeFirstOrThrow()).id;
    // What import --replace holds for as long as it writes (src/lib/data/project-write-lock.ts).
    const client = postgres(inject("testDatabaseUrl") as string, { max: 1, onnotice: () => {} });
    const session = await client.reserve();
    await session`BEGIN`;
    await session`SELECT pg_advisory_xact_lock(${LOCK_CLASS}::int, ${projectId}::int)`;
    const HOLD_MS = 1200;
    const released = new Promise<void>((resolve) =>
      setTimeout(async () => {
        await session`COMMIT`;
        session.release();
        await client.end({ timeout: 1 });
        resolve();
      }, HOLD_MS),
    );
    const started = performance.now();
    const headers = (voter: string) => ({ "X-VF-Anon": `anon-${voter}-${project.slug}` });
    const [voted, commented] = await Promise.all([
      ctx.send("POST", `/api/v3/projects/${project.slug}/features/${featureId}/vote`, project.secretKey, undefined, headers("ada")),
      ctx.send(
        "POST",
        `/api/v3/projects/${project.slug}/features/${featureId}/comments`,
        project.secretKey,
        { content: "hi" },
        headers("bob"),
      ),
    ]);
    await released;
    expect(voted.status).toBe(200);
    expect(commented.status).toBe(201);
    expect(performance.now() - started).toBeGreaterThanOrEqual(HOLD_MS - 50);
  });
});

describe("session bounds in the configuration", () => {
  it("are on by default, and unbounded for the admin command line's statements", async () => {
    const { parseConfig } = await import("../src/config.ts");
    const config = parseConfig({});
    expect(config.DATABASE_LOCK_TIMEOUT_MS).toBeGreaterThan(0);
    expect(config.DATABASE_STATEMENT_TIMEOUT_MS).toBeGreaterThan(config.DATABASE_LOCK_TIMEOUT_MS);
    expect(config.DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS).toBeGreaterThan(0);
    expect(config.DATABASE_ADMIN_STATEMENT_TIMEOUT_MS).toBe(0);
  });
});
