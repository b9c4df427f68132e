/**
 * Readiness of this instance (GET /api/v3/ready): whether the dependencies every data route
 * needs answer. A load balancer polls it, often from several nodes at once, so a probe must stay
 * cheap and bounded even while a dependency hangs: each dependency has at most one probe in
 * flight (concurrent checks share it), and a check waits for it at most `timeoutMs` counted from
 * when that probe started. A probe still hanging past the bound is reported at once as timed
 * out, and no second one is started until it settles.
 */

/** What a check found: answered, failed (an error came back), no answer in time, or no such dependency configured. */
export type CheckState = "ok" | "failed" | "timeout" | "not_configured";

export type DependencyName = "database" | "redis";

/** One call to the dependency; resolves when it answered, rejects when it failed. */
export type Probe = () => Promise<unknown>;

export interface ReadinessResult {
  ready: boolean;
  checks: Record<DependencyName, CheckState>;
  /** The dependencies that are not ok (configured ones only), in check order. */
  failing: { name: DependencyName; state: Exclude<CheckState, "ok" | "not_configured"> }[];
  /** The bound, in milliseconds (for messages). */
  timeoutMs: number;
}

interface InFlight {
  settled: Promise<"ok" | "failed">;
  startedAt: number;
}

/** Readiness probe of one instance's dependencies; `probes.redis` undefined means no Redis configured. */
export class Readiness {
  private readonly inFlight = new Map<DependencyName, InFlight>();

  /**
   * @param probes one call per dependency (database: `select 1`; redis: PING).
   * @param timeoutMs how long a probe may take before the check reports `timeout` (default 2000 ms).
   */
  constructor(
    private readonly probes: { database: Probe; redis: Probe | undefined },
    readonly timeoutMs = 2000,
  ) {}

  /** Checks every dependency concurrently; resolves within about `timeoutMs`, never rejects. */
  async check(): Promise<ReadinessResult> {
    const [database, redis] = await Promise.all([
      this.checkOne("database", this.probes.database),
      this.checkOne("redis", this.probes.redis),
    ]);
    const checks = { database, redis };
    const failing = (Object.entries(checks) as [DependencyName, CheckState][]).flatMap(([name, state]) =>
      state === "failed" || state === "timeout" ? [{ name, state }] : [],
    );
    return { ready: failing.length === 0, checks, failing, timeoutMs: this.timeoutMs };
  }

  private async checkOne(name: DependencyName, probe: Probe | undefined): Promise<CheckState> {
    if (!probe) return "not_configured";
    let flight = this.inFlight.get(name);
    if (!flight) {
      const started: InFlight = {
        startedAt: performance.now(),
        settled: Promise.resolve()
          .then(probe)
          .then(
            () => "ok" as const,
            () => "failed" as const,
          )
          .finally(() => {
            if (this.inFlight.get(name) === started) this.inFlight.delete(name);
          }),
      };
      this.inFlight.set(name, started);
      flight = started;
    }
    const remaining = flight.startedAt + this.timeoutMs - performance.now();
    if (remaining <= 0) return "timeout";
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<"timeout">((resolve) => {
      timer = setTimeout(() => resolve("timeout"), remaining);
    });
    try {
      return await Promise.race([flight.settled, timedOut]);
    } finally {
      clearTimeout(timer);
    }
  }
}
