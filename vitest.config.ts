import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts", "src/**/*.test.ts", "db/**/*.test.ts", "scripts/**/*.test.ts"],
    exclude: ["test/resilience/**", "node_modules/**"],
    globalSetup: ["test/support/global-setup.ts"],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: "forks",
    // Files share their process (and its one embedded database, see test/support/harness.ts).
    isolate: false,
  },
});
