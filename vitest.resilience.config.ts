import { defineConfig } from "vitest/config";

// The resilience suite (test/resilience): faults with real processes, races, hostile input,
// property tests and log hygiene. Files run one at a time: several start their own Postgres,
// Redis and server processes and measure latencies that a parallel neighbour would distort.
export default defineConfig({
  test: {
    include: ["test/resilience/**/*.test.ts"],
    globalSetup: ["test/support/global-setup.ts", "test/resilience/support/global-setup.ts"],
    testTimeout: 120_000,
    hookTimeout: 120_000,
    pool: "forks",
    fileParallelism: false,
    teardownTimeout: 30_000,
  },
});
