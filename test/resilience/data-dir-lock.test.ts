/**
 * The embedded database is one process (docs/operations.md, "The embedded database is one
 * process"): real server processes on a temporary PGlite directory. The admin command run beside
 * a server on the same directory stops with one line naming the server's pid and how to run it
 * (exit 1), and the server keeps serving; a second server on the same port stops on the port
 * before it opens or creates its data directory; once the server is gone (even killed, leaving
 * its lock file behind) the admin command runs.
 */
import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { DATA_DIR_LOCK_FILE } from "../../db/data-dir-lock.ts";
import { send } from "./support/http.ts";
import { signalGroup, spawnTracked, trackTempDir, waitForExit } from "./support/processes.ts";
import { type ServerInstance, startServer } from "./support/server.ts";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const dir = mkdtempSync(join(tmpdir(), "fb-data-dir-lock-"));
trackTempDir(dir);
const dataDir = join(dir, "data");
let server: ServerInstance | undefined;

afterAll(async () => {
  await server?.stop();
});

/** Runs `node --import tsx <script> <args>` with `env` to its end (bounded); its exit code and output. */
async function runNode(script: string, args: string[], env: Record<string, string>) {
  const child = spawnTracked(process.execPath, ["--import", "tsx", script, ...args], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: process.env.HOME ?? "/tmp", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout!.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
  child.stderr!.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
  const exit = await waitForExit(child, 60_000);
  if (exit === "timeout") signalGroup(child, "SIGKILL");
  await new Promise((resolve) => setImmediate(resolve));
  return { code: exit === "timeout" ? "timeout" : exit.code, stdout, stderr };
}

describe("the embedded database directory is held by one process", () => {
  it("refuses the admin command beside a running server with one line naming the server", async () => {
    // DEMO=auto: a new directory starts from the prepared demo database, seconds instead of initdb.
    server = await startServer({ PGLITE_DIR: dataDir, DEMO: "auto" });
    const pid = server.child.pid!;
    expect(readFileSync(join(dataDir, DATA_DIR_LOCK_FILE), "utf8")).toBe(`${pid}\nnpm start\n`);

    const admin = await runNode("scripts/admin.ts", ["keys", "create", "none", "--kind", "embed"], { PGLITE_DIR: dataDir });
    expect(admin.code).toBe(1);
    expect(admin.stdout).toBe("");
    expect(admin.stderr).toBe(
      `error: the embedded database in ${dataDir} is in use by process ${pid} (npm start); ` +
        "PGlite serves one process: stop that process first, or use Postgres (set DATABASE_URL)\n",
    );
    // The server was not disturbed.
    expect((await send(server.origin, { path: "/api/v3/health" })).status).toBe(200);
  });

  it("stops a second server on the same port before it opens or creates its data directory", async () => {
    const fresh = join(dir, "second-data");
    const second = await runNode("src/server.ts", [], {
      PGLITE_DIR: fresh,
      HOST: "127.0.0.1",
      PORT: String(server!.port),
      DEMO: "auto",
      NODE_ENV: "production",
    });
    expect(second.code).toBe(1);
    expect(second.stdout).toBe("");
    expect(second.stderr).toBe(`error: port ${server!.port} on 127.0.0.1 is in use (EADDRINUSE); stop the other process or set PORT\n`);
    expect(existsSync(fresh)).toBe(false);
    expect((await send(server!.origin, { path: "/api/v3/health" })).status).toBe(200);
  });

  it("lets the admin command in once the server is gone, even killed with its lock file left", async () => {
    signalGroup(server!.child, "SIGKILL");
    expect(await waitForExit(server!.child, 10_000)).not.toBe("timeout");
    server = undefined;
    // SIGKILL ran no exit hook: the file names a pid that is no longer alive, a stale lock.
    expect(existsSync(join(dataDir, DATA_DIR_LOCK_FILE))).toBe(true);
    const admin = await runNode("scripts/admin.ts", ["keys", "create", "none", "--kind", "embed"], { PGLITE_DIR: dataDir });
    // It reaches the database: the project does not exist.
    expect(admin.stderr).toBe('error: no project with slug "none"\n');
    expect(admin.code).toBe(1);
    // It let go of the directory when it closed the database.
    expect(existsSync(join(dataDir, DATA_DIR_LOCK_FILE))).toBe(false);
  });
});
