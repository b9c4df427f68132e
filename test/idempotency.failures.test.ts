/**
 * Idempotency-Key when the idempotency store fails (docs/architecture.md, "Data rules":
 * "The idempotency claim never
 * falls back to per-process memory: a request whose claim cannot be made shared does not run";
 * contract, "Errors": 409 idempotency_in_progress with Retry-After and 500 internal are the
 * retryable answers). The app runs on a store whose claim, record or release fails on demand.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApp } from "../src/app.ts";
import { MemoryIdempotencyStore } from "../src/store/memory.ts";
import { type ClaimResult, type IdempotencyStore, IdempotencyStoreUnavailable, type StoredResponse } from "../src/store/store.types.ts";
import { createTestContext, type ImportedProject, type TestContext } from "./support/harness.ts";

const voter = { ref: "ada", anon_token: "anon-token-idem-fail-00000001", display_name: "Ada" };
const features = [{ ref: "f1", board: "roadmap", column: "c-planned", heading: "Offline mode" }];

/** The in-process store, with each step replaceable by a failure; counts what it was asked. */
class FailingStore implements IdempotencyStore {
  readonly inner = new MemoryIdempotencyStore();
  /** Thrown by claim / complete while set. */
  claimError: unknown;
  completeError: unknown;
  calls = { claim: 0, complete: 0, release: 0 };

  async claim(key: string, fingerprint: string, lockSeconds: number): Promise<ClaimResult> {
    this.calls.claim++;
    if (this.claimError) throw this.claimError;
    return this.inner.claim(key, fingerprint, lockSeconds);
  }
  async complete(key: string, token: string, fingerprint: string, response: StoredResponse, ttlSeconds: number): Promise<void> {
    this.calls.complete++;
    if (this.completeError) throw this.completeError;
    return this.inner.complete(key, token, fingerprint, response, ttlSeconds);
  }
  async release(key: string, token: string): Promise<void> {
    this.calls.release++;
    return this.inner.release(key, token);
  }
  forgetScope(scope: string): Promise<number> {
    return this.inner.forgetScope(scope);
  }
  close(): Promise<void> {
    return this.inner.close();
  }
}

let ctx: TestContext;
let project: ImportedProject;
beforeAll(async () => {
  ctx = await createTestContext();
  project = await ctx.importProject({ voters: [voter], features });
});
afterAll(() => ctx.close());

const commentsPath = () => `/api/v3/projects/${project.slug}/features/${project.ids.ids.features.f1}/comments`;
const commentsWith = async (content: string) =>
  Number(
    (
      await ctx.db
        .selectFrom("comments")
        .select((eb) => eb.fn.countAll<number>().as("n"))
        .where("content", "=", content)
        .executeTakeFirstOrThrow()
    ).n,
  );

function appOn(store: IdempotencyStore) {
  const app = createApp({ ...ctx.deps, idempotencyStore: store });
  return (content: string, key: string) =>
    app.request(commentsPath(), {
      method: "POST",
      headers: {
        "X-API-Key": project.secretKey,
        "X-VF-Anon": voter.anon_token,
        "Idempotency-Key": key,
        "Content-Type": "application/json",
      },
      body: JSON.stringify({ content }),
    });
}

describe("Idempotency-Key with the store failing", () => {
  it("a claim that may have been made (no answer in time) answers 409 idempotency_in_progress with Retry-After and runs nothing", async () => {
    const store = new FailingStore();
    store.claimError = new IdempotencyStoreUnavailable(true);
    const send = appOn(store);
    const response = await send("claim timed out", "fail-claim-1");
    expect(response.status).toBe(409);
    expect(response.headers.get("Retry-After")).toBe("1");
    expect(await response.json()).toEqual({
      data: null,
      meta: null,
      error: expect.objectContaining({ code: "idempotency_in_progress", field: null }),
    });
    expect(await commentsWith("claim timed out")).toBe(0);
    expect(store.calls).toEqual({ claim: 1, complete: 0, release: 0 });
  });

  it("a claim that certainly was not made answers 500 internal and runs nothing; the retry once the store answers runs once", async () => {
    const store = new FailingStore();
    store.claimError = new IdempotencyStoreUnavailable(false);
    const send = appOn(store);
    const refused = await send("claim refused", "fail-claim-2");
    expect(refused.status).toBe(500);
    expect((await refused.json()).error).toMatchObject({ code: "internal", field: null });
    expect(await commentsWith("claim refused")).toBe(0);

    store.claimError = undefined;
    const retried = await send("claim refused", "fail-claim-2");
    expect(retried.status).toBe(201);
    expect(retried.headers.get("Idempotent-Replay")).toBeNull();
    const replay = await send("claim refused", "fail-claim-2");
    expect(replay.headers.get("Idempotent-Replay")).toBe("true");
    expect(await commentsWith("claim refused")).toBe(1);
  });

  it("an unexpected failure of the claim (a record it cannot read) answers 500 internal and runs nothing", async () => {
    const store = new FailingStore();
    store.claimError = new SyntaxError("Unexpected token in JSON");
    const response = await appOn(store)("record unreadable", "fail-claim-3");
    expect(response.status).toBe(500);
    const text = await response.text();
    expect(JSON.parse(text).error).toMatchObject({ code: "internal", field: null });
    expect(text).not.toContain("JSON");
    expect(await commentsWith("record unreadable")).toBe(0);
  });

  it("when the finished response cannot be recorded, the client still gets it and the lock stays: a replay is refused, never run again", async () => {
    const store = new FailingStore();
    store.completeError = new IdempotencyStoreUnavailable(true);
    const send = appOn(store);
    const first = await send("record lost", "fail-complete-1");
    expect(first.status).toBe(201);
    expect((await first.json()).data.content).toBe("record lost");
    expect(await commentsWith("record lost")).toBe(1);
    expect(store.calls).toEqual({ claim: 1, complete: 1, release: 0 });

    const replay = await send("record lost", "fail-complete-1");
    expect(replay.status).toBe(409);
    expect((await replay.json()).error.code).toBe("idempotency_in_progress");
    expect(replay.headers.get("Retry-After")).toBe("1");
    expect(await commentsWith("record lost")).toBe(1);
  });
});
