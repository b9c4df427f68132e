/**
 * The bench's CPU accounting (scripts/bench/load.ts): the CPU column of docs/benchmarks.md counts
 * each database connection's time within the run, including connections the server's pool
 * opened during it, and nothing for those its pool closed.
 */
import { describe, expect, it } from "vitest";
import { cpuByPid, cpuSpent } from "./load.ts";

describe("cpuSpent", () => {
  it("adds each process's time since the first reading, a new one's whole time, and nothing for one gone", () => {
    const before = new Map([
      [10, 5.0],
      [11, 3.0],
      [12, 9.0],
    ]);
    const after = new Map([
      [10, 5.5],
      [11, 3.0],
      [13, 0.25],
    ]);
    expect(cpuSpent(before, after)).toBeCloseTo(0.75, 10);
  });
});

describe("cpuByPid", () => {
  it("reads this process's CPU time and leaves out a pid that does not exist", () => {
    const seconds = cpuByPid([process.pid, 2 ** 22 + 1]);
    expect([...seconds.keys()]).toEqual([process.pid]);
    expect(seconds.get(process.pid)).toBeGreaterThan(0);
  });
});
