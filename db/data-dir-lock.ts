/**
 * The embedded database's one-process rule, made visible: PGlite runs Postgres inside the
 * process that opens its directory, so a second process opening the same directory does not
 * wait or get an error from it, it aborts (`Aborted()`) or damages the files. Whoever opens a
 * PGlite directory takes the lock file `feedback-board.lock` in it first, the way Postgres keeps
 * `postmaster.pid` in its data directory (docs/operations.md, "The embedded database is one
 * process").
 *
 * The file holds the pid of the holder on its first line and what it runs on the second
 * (`"npm start"`, `"npm run admin"`). It is created whole (written under a temporary name, then
 * hard-linked into place, which fails when the name exists), so a reader never sees it half
 * written. A lock whose pid is no longer alive (a process killed with SIGKILL, a machine that
 * lost power) is stale: the next opener removes it and takes the lock.
 */
import { linkSync, mkdirSync, readFileSync, unlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/** Name of the lock file inside the data directory. */
export const DATA_DIR_LOCK_FILE = "feedback-board.lock";

/** Thrown by lockDataDir when a live process holds the directory; the message is one line. */
export class DataDirInUseError extends Error {
  constructor(
    readonly dir: string,
    /** pid of the holder. */
    readonly pid: number,
    /** What the holder runs, as its lock file says ("npm start"); "" when the file does not say. */
    readonly holder: string,
  ) {
    super(
      `the embedded database in ${dir} is in use by process ${pid}${holder ? ` (${holder})` : ""}; ` +
        "PGlite serves one process: stop that process first, or use Postgres (set DATABASE_URL)",
    );
    this.name = "DataDirInUseError";
  }
}

/** A held lock; release() removes the file (once; later calls do nothing). */
export interface DataDirLock {
  readonly file: string;
  release(): void;
}

/** Directories this process holds, so that a second open in the same process is refused too. */
const heldHere = new Set<string>();

/** The pid and label in a lock file's text; pid NaN when the text holds none. */
function parseLock(text: string): { pid: number; holder: string } {
  const [pidLine = "", holder = ""] = text.split("\n");
  return { pid: /^\d+$/.test(pidLine.trim()) ? Number(pidLine.trim()) : Number.NaN, holder: holder.trim() };
}

/** Whether process `pid` exists (EPERM: it exists, run by another user). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

function readLock(file: string): { pid: number; holder: string } | undefined {
  try {
    return parseLock(readFileSync(file, "utf8"));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
}

/**
 * Takes the lock of PGlite directory `dir` for this process, creating `dir` if needed.
 * `holder` says what runs (written to the file for the next opener's message).
 *
 * Returns the lock; release it when the database is closed (an exit of the process without
 * release removes the file too). Throws DataDirInUseError when a live process holds it, this
 * process included (a second open of the same directory). A file whose pid is not alive, or that
 * names no pid, is stale and replaced; so is one naming this process's own pid that this process
 * did not take (a container restarted on the same volume runs as pid 1 again).
 */
export function lockDataDir(dir: string, holder: string): DataDirLock {
  mkdirSync(dir, { recursive: true });
  const file = join(dir, DATA_DIR_LOCK_FILE);
  const temporary = `${file}.${process.pid}.tmp`;
  writeFileSync(temporary, `${process.pid}\n${holder}\n`);
  try {
    // Two attempts: the second follows the removal of a stale file. Should another process take
    // the lock between that removal and the second link, the link fails and it is reported.
    for (let attempt = 0; ; attempt++) {
      try {
        linkSync(temporary, file);
        break;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
      }
      const found = readLock(file);
      if (found === undefined) continue;
      const ours = found.pid === process.pid && !heldHere.has(file);
      if (attempt > 0 || (Number.isInteger(found.pid) && alive(found.pid) && !ours)) {
        throw new DataDirInUseError(dir, found.pid, found.holder);
      }
      try {
        unlinkSync(file);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
      }
    }
  } finally {
    unlinkSync(temporary);
  }
  heldHere.add(file);
  let released = false;
  const release = () => {
    if (released) return;
    released = true;
    heldHere.delete(file);
    process.removeListener("exit", release);
    // Only our own file: after a stale takeover by another process it is theirs.
    if (readLock(file)?.pid === process.pid) unlinkSync(file);
  };
  process.on("exit", release);
  return { file, release };
}
