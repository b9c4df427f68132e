/**
 * The lock file of an embedded database directory (db/data-dir-lock.ts; docs/operations.md,
 * "The embedded database is one process"): a live holder refuses, a dead one is stale.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { openDatabase } from "./connect.ts";
import { DATA_DIR_LOCK_FILE, DataDirInUseError, lockDataDir } from "./data-dir-lock.ts";

const dirs: string[] = [];
let sleeper: ChildProcess | undefined;

afterEach(() => {
  sleeper?.kill("SIGKILL");
  sleeper = undefined;
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function newDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "fb-lock-"));
  dirs.push(dir);
  return join(dir, "data");
}

/** A pid that no process has: a child that has exited. */
async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ["-e", ""]);
  await new Promise((resolve) => child.once("exit", resolve));
  return child.pid!;
}

describe("lockDataDir", () => {
  it("creates the directory and a file with this pid and the holder, removed on release", () => {
    const dir = newDir();
    const lock = lockDataDir(dir, "npm start");
    expect(readFileSync(join(dir, DATA_DIR_LOCK_FILE), "utf8")).toBe(`${process.pid}\nnpm start\n`);
    lock.release();
    expect(existsSync(join(dir, DATA_DIR_LOCK_FILE))).toBe(false);
    lock.release();
  });

  it("refuses while another live process holds the directory, naming it", () => {
    const dir = newDir();
    sleeper = spawn("sleep", ["30"]);
    lockDataDir(dir, "x").release();
    writeFileSync(join(dir, DATA_DIR_LOCK_FILE), `${sleeper.pid}\nnpm start\n`);
    let error: unknown;
    try {
      lockDataDir(dir, "npm run admin");
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(DataDirInUseError);
    expect((error as Error).message).toBe(
      `the embedded database in ${dir} is in use by process ${sleeper.pid} (npm start); ` +
        "PGlite serves one process: stop that process first, or use Postgres (set DATABASE_URL)",
    );
    // The holder's file is left as it was.
    expect(readFileSync(join(dir, DATA_DIR_LOCK_FILE), "utf8")).toBe(`${sleeper.pid}\nnpm start\n`);
  });

  it("takes over a stale lock: a pid no longer alive, an empty file, this pid from an earlier life", async () => {
    for (const text of [`${await deadPid()}\nnpm start\n`, "", `${process.pid}\nnpm start\n`]) {
      const dir = newDir();
      lockDataDir(dir, "x").release();
      writeFileSync(join(dir, DATA_DIR_LOCK_FILE), text);
      const lock = lockDataDir(dir, "npm run admin");
      expect(readFileSync(join(dir, DATA_DIR_LOCK_FILE), "utf8")).toBe(`${process.pid}\nnpm run admin\n`);
      lock.release();
    }
  });

  it("refuses a second open in the same process until the first is released", () => {
    const dir = newDir();
    const lock = lockDataDir(dir, "npm start");
    expect(() => lockDataDir(dir, "again")).toThrow(DataDirInUseError);
    lock.release();
    lockDataDir(dir, "again").release();
  });

  it("does not remove a file another process took over after this one", async () => {
    const dir = newDir();
    const lock = lockDataDir(dir, "npm start");
    const other = `${await deadPid()}\nother\n`;
    writeFileSync(join(dir, DATA_DIR_LOCK_FILE), other);
    lock.release();
    expect(readFileSync(join(dir, DATA_DIR_LOCK_FILE), "utf8")).toBe(other);
  });
});

describe("openDatabase on a PGlite directory", () => {
  it("is refused before PGlite touches a directory another process holds", async () => {
    const dir = newDir();
    sleeper = spawn("sleep", ["30"]);
    lockDataDir(dir, "x").release();
    writeFileSync(join(dir, DATA_DIR_LOCK_FILE), `${sleeper.pid}\nnpm start\n`);
    await expect(openDatabase({ PGLITE_DIR: dir })).rejects.toThrow(DataDirInUseError);
    expect(existsSync(join(dir, "PG_VERSION"))).toBe(false);
  });
});
