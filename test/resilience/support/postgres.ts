/**
 * A dedicated Postgres cluster for one test file: initdb into a temp dir with Debian's binaries
 * (/usr/lib/postgresql/<newest>/bin), trust auth, a spare loopback port and the unix socket in
 * the temp dir. As root the processes run as the `postgres` user (postgres refuses root). The
 * postmaster is started directly (not through pg_ctl) in its own process group, so a test can
 * SIGKILL the whole server mid-write and start it again on the same data directory.
 */
import { type ChildProcess, execFileSync } from "node:child_process";
import { chownSync, existsSync, mkdtempSync, openSync, readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import postgres from "postgres";
import { removeTempDir, signalGroup, sparePort, spawnTracked, stopChild, trackTempDir, waitForExit, waitUntil } from "./processes.ts";

export interface PostgresInstance {
  port: number;
  /** postgres://postgres@127.0.0.1:<port>/postgres */
  url: string;
  /** A small client for the test's own queries and locks (reconnects after a restart). */
  sql: postgres.Sql;
  /** SIGKILL the postmaster and every backend (a crash of the whole server). */
  kill(): Promise<void>;
  /** Starts the server again on the same data directory (crash recovery runs). */
  restart(): Promise<void>;
  close(): Promise<void>;
}

function binDir(): string {
  const root = "/usr/lib/postgresql";
  if (!existsSync(root)) throw new Error("no Postgres binaries under /usr/lib/postgresql (apt-get install postgresql)");
  const versions = readdirSync(root).filter((name) => existsSync(join(root, name, "bin", "postgres")));
  versions.sort((a, b) => Number(b) - Number(a));
  if (versions.length === 0) throw new Error("no Postgres binaries under /usr/lib/postgresql");
  return join(root, versions[0]!, "bin");
}

function postgresUser(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const uid = Number(execFileSync("id", ["-u", "postgres"]).toString().trim());
  const gid = Number(execFileSync("id", ["-g", "postgres"]).toString().trim());
  return { uid, gid };
}

export async function startPostgres(): Promise<PostgresInstance> {
  const bin = binDir();
  const user = postgresUser();
  const port = await sparePort();
  const base = mkdtempSync(join(tmpdir(), "fb-res-pg-"));
  trackTempDir(base);
  if (user) chownSync(base, user.uid, user.gid);
  const dataDir = join(base, "data");
  const runAs = user ? { uid: user.uid, gid: user.gid } : {};
  const env = { PATH: process.env.PATH ?? "/usr/bin:/bin", LANG: "C.UTF-8", LC_ALL: "C.UTF-8", HOME: base };
  execFileSync(
    join(bin, "initdb"),
    ["-D", dataDir, "-A", "trust", "-U", "postgres", "-E", "UTF8", "--locale=C.UTF-8", "--no-sync", "--no-instructions"],
    {
      ...runAs,
      env,
      stdio: "ignore",
    },
  );

  let child: ChildProcess | undefined;
  async function launch(): Promise<void> {
    // A crashed postmaster's backends may still be detaching from shared memory: retry a little.
    await waitUntil(
      `postgres on port ${port}`,
      async () => {
        if (!child || child.exitCode !== null || child.signalCode !== null) {
          const log = openSync(join(base, "postgres.log"), "a");
          if (user) chownSync(join(base, "postgres.log"), user.uid, user.gid);
          child = spawnTracked(
            join(bin, "postgres"),
            [
              "-D",
              dataDir,
              "-p",
              String(port),
              "-k",
              base,
              "-c",
              "listen_addresses=127.0.0.1",
              // fsync off is safe for a process crash (the kernel keeps what was written); the
              // suite kills processes, never the machine.
              "-c",
              "fsync=off",
              "-c",
              "full_page_writes=off",
              "-c",
              "max_connections=200",
              "-c",
              "shared_buffers=64MB",
            ],
            { ...runAs, env, stdio: ["ignore", log, log] },
          );
        }
        execFileSync(join(bin, "pg_isready"), ["-h", "127.0.0.1", "-p", String(port), "-q"], { stdio: "ignore" });
        return true;
      },
      60_000,
      150,
    );
  }

  await launch();
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  const sql = postgres(url, { max: 4, onnotice: () => {}, connect_timeout: 5 });
  return {
    port,
    url,
    sql,
    async kill() {
      if (!child) return;
      signalGroup(child, "SIGKILL");
      await waitForExit(child, 5000);
    },
    restart: launch,
    async close() {
      await sql.end({ timeout: 1 }).catch(() => {});
      if (child) await stopChild(child, "SIGINT", 5000);
      removeTempDir(base);
    },
  };
}
