/**
 * The container image (Dockerfile; docs/operations.md, "Container image"), read without a Docker engine:
 * a supported Node LTS in every stage and package.json "engines" saying the same, the unprivileged
 * `node` user, the compiled server as the command, and never the demo's published keys: HOST is
 * 0.0.0.0 there, so DEMO must not be `public`, and the start code must replace published keys off
 * loopback (test/demo-keys.test.ts; the command itself is run in
 * test/resilience/container-start.test.ts).
 */
import { readFileSync } from "node:fs";
import semver from "semver";
import { describe, expect, it } from "vitest";
import { parseConfig } from "../src/config.ts";
import { wellKnownDemoKeysAllowed } from "../src/lib/rules/published-demo-keys.ts";

const dockerfile = readFileSync(new URL("../Dockerfile", import.meta.url), "utf8").replace(/\\\n/g, " ");
const packageJson = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as {
  engines: { node: string };
  scripts: Record<string, string>;
};
const instructions = dockerfile
  .split("\n")
  .map((line) => line.trim())
  .filter((line) => line !== "" && !line.startsWith("#"));
const stages = instructions.join("\n").split(/^(?=FROM )/m);
const runtime = stages.at(-1)!;

/** ENV key=value pairs of a stage. */
function envOf(stage: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const line of stage.split("\n").filter((l) => l.startsWith("ENV "))) {
    for (const [, key, value] of line.slice(4).matchAll(/(\w+)=(\S+)/g)) env[key!] = value!;
  }
  return env;
}

describe("Dockerfile", () => {
  it("builds every stage on Node 22 or 24 LTS, and package.json engines match", () => {
    const bases = instructions.filter((line) => line.startsWith("FROM ")).map((line) => line.split(/\s+/)[1]!);
    const images = bases.filter((base) => base.startsWith("node:"));
    expect(images.length).toBeGreaterThan(0);
    for (const image of images) expect(image, image).toMatch(/^node:(22|24)(-|$)/);
    for (const image of images) {
      const major = /^node:(\d+)/.exec(image)![1];
      // The newest release of that line satisfies engines.
      expect(semver.satisfies(`${major}.99.0`, packageJson.engines.node), `${image} vs engines ${packageJson.engines.node}`).toBe(true);
    }
    for (const ended of ["18.20.0", "20.19.0", "20.99.0"]) expect(semver.satisfies(ended, packageJson.engines.node), ended).toBe(false);
  });

  it("runs the compiled server as the node user, built by npm run build", () => {
    const userAt = runtime.indexOf("\nUSER node");
    const cmd = /^CMD (\[.*\])$/m.exec(runtime);
    expect(userAt).toBeGreaterThan(-1);
    expect(cmd).not.toBeNull();
    expect(runtime.indexOf(cmd![0])).toBeGreaterThan(userAt);
    const argv = JSON.parse(cmd![1]!) as string[];
    expect(argv[0]).toBe("node");
    expect(argv).not.toContain("tsx");
    const entry = argv.at(-1)!;
    expect(entry).toMatch(/^dist\/.*\.js$/);
    expect(instructions).toContain("RUN npm run build");
    expect(packageJson.scripts.build).toContain("src/server.ts");
    expect(packageJson.scripts.build).toContain("--outdir=dist");
    expect(runtime).toMatch(/^COPY --from=build .*\/app\/dist \.\/dist$/m);
  });

  it("never serves the demo's published keys: HOST off loopback, DEMO not public", () => {
    const env = envOf(runtime);
    expect(env.HOST).toBe("0.0.0.0");
    expect(env.DEMO).toBe("off");
    const config = parseConfig(env);
    expect(wellKnownDemoKeysAllowed(config)).toBe(false);
    // The same holds for anyone who asks the image for the demo.
    expect(wellKnownDemoKeysAllowed(parseConfig({ ...env, DEMO: "auto" }))).toBe(false);
  });

  it("checks liveness on /api/v3/health", () => {
    expect(runtime).toMatch(/^HEALTHCHECK .*\/api\/v3\/health/m);
  });
});
