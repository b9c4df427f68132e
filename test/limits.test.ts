/**
 * Limits and idempotency (contract, "Limits"): rate budgets and their headers, the body limit,
 * malformed JSON, and Idempotency-Key replays, conflicts and scoping.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createApp } from "../src/app.ts";
import { RedisIdempotencyStore } from "../src/store/idempotency.redis.ts";
import { connectRedis, RedisRateLimiter } from "../src/store/redis.ts";
import { createTestContext, type ImportedProject, type TestContext } from "./support/harness.ts";

const voters = [
  { ref: "ada", anon_token: "anon-token-ada-0000000000001", display_name: "Ada" },
  { ref: "bob", anon_token: "anon-token-bob-0000000000002", display_name: "Bob" },
];
const features = [{ ref: "f1", board: "roadmap", column: "c-planned", heading: "Dark mode" }];

let ctx: TestContext;
let project: ImportedProject;
beforeAll(async () => {
  ctx = await createTestContext({ RATE_LIMIT_READS_PER_MINUTE: "5", RATE_LIMIT_WRITES_PER_MINUTE: "100" });
  project = await ctx.importProject({ voters, features });
});
afterAll(() => ctx.close());
// Tests that count a budget pin the clock inside one window.
afterEach(() => ctx.clock.release());

const commentsPath = () => `/api/v3/projects/${project.slug}/features/${project.ids.ids.features.f1}/comments`;
const countComments = async () =>
  Number(
    (
      await ctx.db
        .selectFrom("comments")
        .select((eb) => eb.fn.countAll<number>().as("n"))
        .where("feature_id", "=", project.ids.ids.features.f1)
        .executeTakeFirstOrThrow()
    ).n,
  );

describe("rate limits", () => {
  it("counts reads per key, sends X-RateLimit-* on every keyed response, and answers 429 with Retry-After", async () => {
    const { slug, secretKey } = await ctx.importProject();
    const now = ctx.clock.pinInsideWindow().getTime() / 1000;
    const path = `/api/v3/projects/${slug}`;
    const seen: Response[] = [];
    for (let i = 0; i < 5; i++) seen.push(await ctx.get(path, secretKey));
    expect(seen.map((r) => r.status)).toEqual([200, 200, 200, 200, 200]);
    expect(seen.map((r) => r.headers.get("X-RateLimit-Remaining"))).toEqual(["4", "3", "2", "1", "0"]);
    expect(seen[0]!.headers.get("X-RateLimit-Limit")).toBe("5");
    const reset = Number(seen[0]!.headers.get("X-RateLimit-Reset"));
    expect(reset).toBeGreaterThan(now);
    expect(reset).toBeLessThanOrEqual(Math.ceil(now) + 60);

    const refused = await ctx.get(path, secretKey);
    expect(refused.status).toBe(429);
    expect((await refused.json()).error.code).toBe("rate_limited");
    expect(Number(refused.headers.get("Retry-After"))).toBeGreaterThanOrEqual(1);
    expect(refused.headers.get("X-RateLimit-Remaining")).toBe("0");

    // Writes have their own budget.
    const write = await ctx.send("POST", `/api/v3/projects/${slug}/identity`, secretKey);
    expect(write.status).toBe(201);
    expect(write.headers.get("X-RateLimit-Limit")).toBe("100");
  });

  it("counts budgets in windows of the app's clock: the next window starts a fresh budget", async () => {
    const { slug, secretKey } = await ctx.importProject();
    const start = ctx.clock.pinInsideWindow().getTime();
    const path = `/api/v3/projects/${slug}`;
    for (let i = 0; i < 5; i++) expect((await ctx.get(path, secretKey)).status).toBe(200);
    const refused = await ctx.get(path, secretKey);
    expect(refused.status).toBe(429);
    expect(refused.headers.get("Retry-After")).toBe("59");
    ctx.clock.pin(start + 60_000);
    const next = await ctx.get(path, secretKey);
    expect(next.status).toBe(200);
    expect(next.headers.get("X-RateLimit-Remaining")).toBe("4");
    expect(Number(next.headers.get("X-RateLimit-Reset"))).toBe(Number(refused.headers.get("X-RateLimit-Reset")) + 60);
  });

  it("gives the embed key a budget of its own", async () => {
    const { slug, secretKey, embedKey } = await ctx.importProject();
    ctx.clock.pinInsideWindow();
    for (let i = 0; i < 5; i++) await ctx.get(`/api/v3/projects/${slug}`, secretKey);
    const embed = await ctx.get(`/api/v3/projects/${slug}`, embedKey);
    expect(embed.status).toBe(200);
    expect(embed.headers.get("X-RateLimit-Limit")).toBe(ctx.deps.config.RATE_LIMIT_EMBED_READS_PER_MINUTE.toString());
  });
});

describe("request bodies", () => {
  it("refuses a body over one megabyte with 413 too_large and creates nothing", async () => {
    const before = await countComments();
    const content = "x".repeat(1024 * 1024 + 1);
    const response = await ctx.send("POST", commentsPath(), project.secretKey, content, {
      "X-VF-Anon": voters[0]!.anon_token,
      "Content-Type": "application/json",
    });
    expect(response.status).toBe(413);
    // The rest of such a body is never read: the connection cannot serve another request.
    expect(response.headers.get("Connection")).toBe("close");
    expect((await response.json()).error.code).toBe("too_large");
    expect(await countComments()).toBe(before);
  });

  it("refuses a chunked body over one megabyte that carries no Content-Length", async () => {
    const chunk = new TextEncoder().encode("y".repeat(64 * 1024));
    let sent = 0;
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent > 1024 * 1024) return controller.close();
        sent += chunk.length;
        controller.enqueue(chunk);
      },
    });
    const response = await ctx.app.request(commentsPath(), {
      method: "POST",
      headers: { "X-API-Key": project.secretKey, "X-VF-Anon": voters[0]!.anon_token, "Content-Type": "application/json" },
      body: stream,
      // @ts-expect-error undici needs duplex for a streamed body
      duplex: "half",
    });
    expect(response.status).toBe(413);
  });

  it("refuses a JSON body wider or deeper than any request takes (422, field body) before parsing it, and creates nothing", async () => {
    const countVoters = async () =>
      Number(
        (
          await ctx.db
            .selectFrom("voters")
            .select((eb) => eb.fn.countAll<number>().as("n"))
            .executeTakeFirstOrThrow()
        ).n,
      );
    const before = await countVoters();
    const wide = `{${Array.from({ length: 100_000 }, (_, i) => `"${i.toString(36)}":0`).join(",")}}`;
    expect(wide.length).toBeGreaterThan(850_000);
    const deep = `{"anon_token":${"[".repeat(40)}${"]".repeat(40)}}`;
    for (const body of [wide, deep]) {
      const response = await ctx.send("POST", `/api/v3/projects/${project.slug}/identity`, project.embedKey, body, {
        "Content-Type": "application/json",
      });
      expect(response.status).toBe(422);
      const { error } = await response.json();
      expect(error).toMatchObject({ code: "validation_failed", field: "body" });
      expect(error.message).toMatch(/more than 1000 keys|deeper than 32 levels/);
    }
    expect(await countVoters()).toBe(before);
  });

  it("still takes a body of nearly one megabyte made of a long array or a long string", async () => {
    const before = await countComments();
    const ids = Array.from({ length: 120_000 }, (_, i) => 1_000_000 + i);
    const bodies = [
      JSON.stringify({ content: "long array", ids }),
      JSON.stringify({ content: "long string", pad: "z".repeat(1000 * 1000) }),
    ];
    for (const body of bodies) {
      expect(body.length).toBeGreaterThan(900_000);
      expect(body.length).toBeLessThanOrEqual(1024 * 1024);
      const response = await ctx.send("POST", commentsPath(), project.secretKey, body, {
        "X-VF-Anon": voters[0]!.anon_token,
        "Content-Type": "application/json",
      });
      expect(response.status).toBe(201);
    }
    expect(await countComments()).toBe(before + 2);
  });

  it("answers malformed JSON with 422 validation_failed", async () => {
    const response = await ctx.send("POST", commentsPath(), project.secretKey, "{not json", { "X-VF-Anon": voters[0]!.anon_token });
    expect(response.status).toBe(422);
    const { error } = await response.json();
    expect(error.code).toBe("validation_failed");
    expect(error.field).toEqual(expect.any(String));
  });
});

describe("Idempotency-Key", () => {
  const ada = { "X-VF-Anon": voters[0]!.anon_token };

  it("replays the original response with Idempotent-Replay: true and creates nothing new", async () => {
    const before = await countComments();
    const headers = { ...ada, "Idempotency-Key": "replay-1" };
    const first = await ctx.send("POST", commentsPath(), project.secretKey, { content: "once" }, headers);
    const second = await ctx.send("POST", commentsPath(), project.secretKey, { content: "once" }, headers);
    expect(first.status).toBe(201);
    expect(second.status).toBe(201);
    expect(first.headers.get("Idempotent-Replay")).toBeNull();
    expect(second.headers.get("Idempotent-Replay")).toBe("true");
    expect(await second.text()).toBe(await first.text());
    expect(await countComments()).toBe(before + 1);
  });

  it("refuses the same key on another route or with another body (409 idempotency_mismatch)", async () => {
    const headers = { ...ada, "Idempotency-Key": "mismatch-1" };
    expect((await ctx.send("POST", commentsPath(), project.secretKey, { content: "a" }, headers)).status).toBe(201);
    const otherBody = await ctx.send("POST", commentsPath(), project.secretKey, { content: "b" }, headers);
    expect(otherBody.status).toBe(409);
    expect((await otherBody.json()).error.code).toBe("idempotency_mismatch");
    const otherRoute = await ctx.send(
      "POST",
      `/api/v3/projects/${project.slug}/features/${project.ids.ids.features.f1}/vote`,
      project.secretKey,
      undefined,
      headers,
    );
    expect(otherRoute.status).toBe(409);
    expect((await otherRoute.json()).error.code).toBe("idempotency_mismatch");
  });

  it("scopes records by voter: two voters using one key string do not see each other's responses", async () => {
    const key = { "Idempotency-Key": "shared-key" };
    const a = await ctx.send("POST", commentsPath(), project.secretKey, { content: "same" }, { ...ada, ...key });
    const b = await ctx.send(
      "POST",
      commentsPath(),
      project.secretKey,
      { content: "same" },
      { "X-VF-Anon": voters[1]!.anon_token, ...key },
    );
    expect(a.status).toBe(201);
    expect(b.status).toBe(201);
    expect(b.headers.get("Idempotent-Replay")).toBeNull();
    expect((await a.json()).data.id).not.toBe((await b.json()).data.id);
  });

  it("creates exactly one comment from 20 parallel requests with one key; the rest replay or get 409 in progress", async () => {
    const before = await countComments();
    const headers = { ...ada, "Idempotency-Key": "parallel-1" };
    const responses = await Promise.all(
      Array.from({ length: 20 }, () => ctx.send("POST", commentsPath(), project.secretKey, { content: "parallel" }, headers)),
    );
    expect(await countComments()).toBe(before + 1);
    for (const response of responses) {
      if (response.status === 409) {
        expect((await response.json()).error.code).toBe("idempotency_in_progress");
        expect(response.headers.get("Retry-After")).toBe("1");
      } else {
        expect(response.status).toBe(201);
      }
    }
    expect(responses.filter((r) => r.status === 201 && r.headers.get("Idempotent-Replay") === null)).toHaveLength(1);
  });

  it("refuses keys over 200 characters or with non-printable characters with 422", async () => {
    for (const key of ["k".repeat(201), "bad\u0001key"]) {
      const response = await ctx.send("POST", commentsPath(), project.secretKey, { content: "x" }, { ...ada, "Idempotency-Key": key });
      expect(response.status).toBe(422);
      expect((await response.json()).error).toMatchObject({ code: "validation_failed", field: "Idempotency-Key" });
    }
  });
});

describe.runIf(Boolean(process.env.REDIS_URL))("two instances on one Postgres + Redis", () => {
  it("share one rate budget and one idempotency record", async () => {
    const { config, logger } = ctx.deps;
    const redis = connectRedis(config.REDIS_URL!, config.REDIS_COMMAND_TIMEOUT_MS, config.REDIS_KEY_PREFIX);
    const second = createApp({
      ...ctx.deps,
      rateLimiter: new RedisRateLimiter(redis, logger, config.RATE_LIMIT_FALLBACK_FACTOR, () => ctx.clock.now().getTime()),
      idempotencyStore: new RedisIdempotencyStore(redis, logger),
    });
    try {
      const { slug, secretKey } = await ctx.importProject();
      ctx.clock.pinInsideWindow();
      const a = await ctx.get(`/api/v3/projects/${slug}`, secretKey);
      const b = await second.request(`/api/v3/projects/${slug}`, { headers: { "X-API-Key": secretKey } });
      expect(a.headers.get("X-RateLimit-Remaining")).toBe("4");
      expect(b.headers.get("X-RateLimit-Remaining")).toBe("3");

      const before = await countComments();
      const headers = { "X-API-Key": project.secretKey, ...ada(), "Idempotency-Key": "two-instances", "Content-Type": "application/json" };
      const first = await ctx.app.request(commentsPath(), { method: "POST", headers, body: JSON.stringify({ content: "x" }) });
      const replay = await second.request(commentsPath(), { method: "POST", headers, body: JSON.stringify({ content: "x" }) });
      expect(first.status).toBe(201);
      expect(replay.headers.get("Idempotent-Replay")).toBe("true");
      expect(await countComments()).toBe(before + 1);
    } finally {
      redis.disconnect();
    }
  });
  const ada = () => ({ "X-VF-Anon": voters[0]!.anon_token });
});
