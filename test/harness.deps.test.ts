/**
 * The harness builds its dependencies with the server's openDeps (src/deps.ts): every setting
 * a test overrides reaches the app as it would in production.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestContext, type TestContext } from "./support/harness.ts";

describe("test harness dependencies", () => {
  let ctx: TestContext;
  beforeAll(async () => {
    // A Redis that never answers: every count comes from the per-process fallback, whose budget
    // is the configured one scaled by RATE_LIMIT_FALLBACK_FACTOR (README, configuration table).
    ctx = await createTestContext({
      REDIS_URL: "redis://127.0.0.1:1",
      RATE_LIMIT_FALLBACK_FACTOR: "0.5",
      RATE_LIMIT_READS_PER_MINUTE: "4",
    });
  });
  afterAll(() => ctx.close());

  it("honours RATE_LIMIT_FALLBACK_FACTOR while Redis is down", async () => {
    const { slug, secretKey } = await ctx.importProject();
    ctx.clock.pinInsideWindow();
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) {
      const response = await ctx.get(`/api/v3/projects/${slug}`, secretKey);
      statuses.push(response.status);
      expect(response.headers.get("X-RateLimit-Limit")).toBe("4");
    }
    expect(statuses).toEqual([200, 200, 429, 429]);
  });
});
