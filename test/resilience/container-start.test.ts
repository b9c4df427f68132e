/**
 * The container's start command, run here without a Docker engine (docs/operations.md, "Container image"):
 * `npm run build`, then the Dockerfile's CMD with its runtime ENV (the port and data directory
 * moved to this machine's spare ones) as an unprivileged user, from the checkout. It serves
 * /health and /ready; the demo's published keys are never honoured there (HOST=0.0.0.0): with the
 * image's DEMO=off there is no demo, and with DEMO=auto asked for, the demo comes with random keys
 * printed once, which work, while the published ones answer 401. Prints the time from spawn to
 * the first 200 on /health, compiled and with tsx, for the README.
 */
import { execFileSync } from "node:child_process";
import { chownSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEMO_SECRET_KEY, DEMO_SLUG } from "../../src/admin/demo.ts";
import { json, send } from "./support/http.ts";
import { startPostgres } from "./support/postgres.ts";
import { sparePort, spawnTracked, stopChild, trackTempDir, waitUntil } from "./support/processes.ts";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const NOBODY = 65534;
const dockerfile = readFileSync(join(ROOT, "Dockerfile"), "utf8").replace(/\\\n/g, " ");
const runtime = dockerfile.split(/^(?=FROM )/m).at(-1)!;
const imageEnv: Record<string, string> = {};
for (const line of runtime.split("\n").filter((l) => l.startsWith("ENV "))) {
  for (const [, key, value] of line.slice(4).matchAll(/(\w+)=(\S+)/g)) imageEnv[key!] = value!;
}
const cmd = JSON.parse(/^CMD (\[.*\])$/m.exec(runtime)![1]!) as string[];

interface Started {
  origin: string;
  output: () => string;
  msToHealth: number;
  stop: () => Promise<void>;
}

/** Runs `argv` (argv[0] "node") as nobody with the image's ENV plus `env`; resolves at the first 200 on /health. */
async function start(argv: string[], env: Record<string, string>): Promise<Started> {
  const port = await sparePort();
  let output = "";
  const began = performance.now();
  const child = spawnTracked(process.execPath, argv.slice(1), {
    cwd: ROOT,
    uid: NOBODY,
    gid: NOBODY,
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: "/tmp", ...imageEnv, PORT: String(port), LOG_LEVEL: "info", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  child.stdout!.setEncoding("utf8").on("data", (chunk: string) => (output += chunk));
  child.stderr!.setEncoding("utf8").on("data", (chunk: string) => (output += chunk));
  const origin = `http://127.0.0.1:${port}`;
  await waitUntil(
    "the first 200 on /health",
    async () => {
      if (child.exitCode !== null) throw new Error(`exited ${child.exitCode}: ${output}`);
      return (await send(origin, { path: "/api/v3/health", timeoutMs: 2000 })).status === 200;
    },
    90_000,
    20,
  );
  return { origin, output: () => output, msToHealth: performance.now() - began, stop: () => stopChild(child, "SIGTERM", 10_000) };
}

function dataDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "fb-container-"));
  trackTempDir(dir);
  chownSync(dir, NOBODY, NOBODY);
  return join(dir, "data");
}

const running: Started[] = [];
beforeAll(() => {
  execFileSync("npm", ["run", "--silent", "build"], { cwd: ROOT, stdio: "ignore" });
});
afterAll(async () => {
  for (const server of running) await server.stop().catch(() => {});
});

describe("the container's start command", () => {
  it("serves /health and /ready as an unprivileged user, with no demo and no published key", async () => {
    expect(imageEnv.HOST).toBe("0.0.0.0");
    const server = await start(cmd, { PGLITE_DIR: dataDir() });
    running.push(server);
    expect((await send(server.origin, { path: "/api/v3/ready" })).status).toBe(200);
    const refused = await send(server.origin, { path: `/api/v3/projects/${DEMO_SLUG}`, headers: { "X-API-Key": DEMO_SECRET_KEY } });
    expect(refused.status).toBe(401);
    expect(server.output()).not.toContain(DEMO_SECRET_KEY);
    await server.stop();
  });

  it("asked for the demo (DEMO=auto), serves it with random keys printed once, never the published ones", async () => {
    const dir = dataDir();
    const server = await start(cmd, { PGLITE_DIR: dir, DEMO: "auto" });
    running.push(server);
    const printed = /^ {2}secret key: (\S+)$/m.exec(server.output())?.[1];
    expect(printed).toMatch(/^fb_sk_/);
    expect(printed).not.toBe(DEMO_SECRET_KEY);
    expect(server.output()).not.toContain(DEMO_SECRET_KEY);
    const path = `/api/v3/projects/${DEMO_SLUG}/features?sort=top&per_page=5`;
    const published = await send(server.origin, { path, headers: { "X-API-Key": DEMO_SECRET_KEY } });
    expect(published.status).toBe(401);
    expect(json(published).error.code).toBe("invalid_key");
    const served = await send(server.origin, { path, headers: { "X-API-Key": printed! } });
    expect(served.status).toBe(200);
    expect(json(served).data).toHaveLength(5);
    await server.stop();

    // The next start on the same data keeps those keys and prints no key.
    const again = await start(cmd, { PGLITE_DIR: dir, DEMO: "auto" });
    running.push(again);
    expect(again.output()).not.toMatch(/secret key:/);
    expect((await send(again.origin, { path, headers: { "X-API-Key": printed! } })).status).toBe(200);
    await again.stop();
  });

  it("starts faster compiled than with tsx (time to the first 200 on /health)", async () => {
    const tsx = ["node", ...cmd.slice(1, -1), "--import", "tsx", "src/server.ts"];
    const times: { compiled: number[]; tsx: number[] } = { compiled: [], tsx: [] };
    // On Postgres: an embedded database's start (PGlite's WASM, initdb) would drown the difference.
    const pg = await startPostgres();
    for (let run = 0; run < 3; run++) {
      for (const [name, argv] of [
        ["compiled", cmd],
        ["tsx", tsx],
      ] as const) {
        const server = await start(argv, { DATABASE_URL: pg.url, WEBHOOK_WORKER: "off" });
        times[name].push(Math.round(server.msToHealth));
        await server.stop();
      }
    }
    await pg.close();
    const median = (values: number[]) => [...values].sort((a, b) => a - b)[1]!;
    console.log(`time to the first 200 on /health (ms): compiled ${times.compiled.join(", ")}; tsx ${times.tsx.join(", ")}`);
    expect(median(times.compiled)).toBeLessThan(median(times.tsx));
  }, 600_000);
});
