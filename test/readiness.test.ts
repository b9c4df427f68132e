/**
 * The readiness probe's bounds (src/lib/data/readiness.ts, docs/operations.md, "Health and readiness"): at most one
 * probe in flight per dependency whatever the number of callers, each caller answered within the
 * bound counted from when that probe started, and a failure reported as such.
 */
import { describe, expect, it } from "vitest";
import { Readiness } from "../src/lib/data/readiness.ts";

/** A probe that hangs until released, counting its calls. */
function hangingProbe() {
  let calls = 0;
  let release: () => void = () => {};
  return {
    probe: () => {
      calls++;
      return new Promise<void>((resolve) => {
        release = resolve;
      });
    },
    calls: () => calls,
    release: () => release(),
  };
}

describe("Readiness", () => {
  it("runs one probe per dependency for any number of concurrent checks, each bounded by the timeout", async () => {
    const database = hangingProbe();
    const readiness = new Readiness({ database: database.probe, redis: async () => "PONG" }, 200);
    const started = performance.now();
    const results = await Promise.all(Array.from({ length: 50 }, () => readiness.check()));
    const elapsed = performance.now() - started;
    expect(database.calls()).toBe(1);
    expect(elapsed).toBeLessThan(1000);
    for (const result of results) {
      expect(result).toMatchObject({
        ready: false,
        checks: { database: "timeout", redis: "ok" },
        failing: [{ name: "database", state: "timeout" }],
      });
    }
    // Still hanging: answered at once, no second probe.
    const again = performance.now();
    expect((await readiness.check()).checks.database).toBe("timeout");
    expect(performance.now() - again).toBeLessThan(50);
    expect(database.calls()).toBe(1);
    // Once it settles, the next check starts a new probe.
    database.release();
    await new Promise((resolve) => setTimeout(resolve, 10));
    const next = readiness.check();
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(database.calls()).toBe(2);
    database.release();
    expect(await next).toMatchObject({ ready: true, checks: { database: "ok", redis: "ok" }, failing: [] });
  });

  it("reports a failing probe as failed and an absent one as not configured", async () => {
    const readiness = new Readiness({ database: async () => 1, redis: undefined });
    expect((await readiness.check()).checks).toEqual({ database: "ok", redis: "not_configured" });
    const failing = new Readiness({ database: async () => 1, redis: () => Promise.reject(new Error("ECONNREFUSED")) });
    expect(await failing.check()).toMatchObject({
      ready: false,
      checks: { redis: "failed" },
      failing: [{ name: "redis", state: "failed" }],
    });
  });
});
