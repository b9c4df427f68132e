/**
 * Reading an uploaded zip within the bounds of imports-v3.md ("How an import runs", rule 6): at
 * most 500 MB uncompressed in all, no entry over 100 times its compressed size. Entries are read
 * one by one as streams (fflate's `Unzip`), fed a kilobyte of the archive at a time, so a bound is
 * noticed after at most about a megabyte of output past it (deflate expands at most ~1032:1) and
 * the inflating stops there: a zip bomb is never inflated in memory. Sizes an entry's header
 * declares are checked before any byte of it is inflated; what is actually inflated is counted
 * too, since a header may lie. Entries the reader does not ask for are never inflated.
 */
import { Unzip, type UnzipFile, UnzipInflate } from "fflate";
import { ImportFileError } from "../import-data.ts";

/** The bounds of rule 6, in bytes and as a ratio; overridable only by tests. */
export interface ZipLimits {
  maxTotalBytes: number;
  maxRatio: number;
}

export const ZIP_LIMITS: ZipLimits = { maxTotalBytes: 500 * 1024 * 1024, maxRatio: 100 };

/** Bytes of the archive handed to the inflater at a time (bounds the overshoot past a limit). */
const PUSH_BYTES = 1024;

/** True when `bytes` starts like a zip archive (a local file header or an empty archive's end record). */
export function isZip(bytes: Uint8Array): boolean {
  return (
    bytes.length >= 4 &&
    bytes[0] === 0x50 &&
    bytes[1] === 0x4b &&
    ((bytes[2] === 3 && bytes[3] === 4) || (bytes[2] === 5 && bytes[3] === 6))
  );
}

/** The file name of an entry without its folders, lower-cased: how readers look entries up. */
export function entryBaseName(name: string): string {
  return (name.split("/").pop() ?? name).toLowerCase();
}

/** Counts what a read inflated (for tests that a refused bomb stayed small). */
export interface ZipReadStats {
  inflatedBytes: number;
}

function megabytes(bytes: number): string {
  return `${Math.round(bytes / (1024 * 1024))} MB`;
}

/**
 * Inflates the entries of `zip` whose base name (entryBaseName) is in `wanted`, skipping folders
 * and macOS resource forks (`__MACOSX/`). Returns them by base name. Throws ImportFileError
 * (`<zipName>: ...`) when the archive is not a readable zip, two entries share a wanted name, or a
 * bound of `limits` is crossed (the message names the bound).
 */
export function readZipEntries(
  zip: Uint8Array,
  zipName: string,
  wanted: ReadonlySet<string>,
  limits: ZipLimits = ZIP_LIMITS,
  stats: ZipReadStats = { inflatedBytes: 0 },
): Map<string, Uint8Array> {
  if (!isZip(zip)) throw new ImportFileError(`${zipName}: not a zip archive`);
  if (!hasEndRecord(zip)) throw new ImportFileError(`${zipName}: not a complete zip archive (no end record: truncated?)`);
  const found = new Map<string, Uint8Array>();
  const started = new Set<string>();
  let declaredTotal = 0;
  let failure: ImportFileError | null = null;
  let offset = 0;
  const unzip = new Unzip();
  unzip.register(UnzipInflate);
  unzip.onfile = (file: UnzipFile) => {
    if (failure !== null) return;
    const base = entryBaseName(file.name);
    if (file.name.endsWith("/") || file.name.startsWith("__MACOSX/") || !wanted.has(base)) return;
    if (started.has(base)) {
      failure = new ImportFileError(`${zipName}: holds ${base} twice`);
      return;
    }
    if (file.compression !== 0 && file.compression !== 8) {
      failure = new ImportFileError(
        `${zipName}: ${file.name} uses compression method ${file.compression} (only stored and deflate are read)`,
      );
      return;
    }
    // A header written by a streaming zipper carries no sizes: the rest of the archive then bounds the entry.
    const compressed = Math.max(1, file.size !== undefined && file.size > 0 ? file.size : zip.length - offset);
    const maxEntry = compressed * limits.maxRatio;
    if (file.originalSize !== undefined) {
      declaredTotal += file.originalSize;
      if (file.originalSize > maxEntry) {
        failure = new ImportFileError(
          `${zipName}: ${file.name} would inflate over ${limits.maxRatio} times its compressed size (the bound of one entry)`,
        );
        return;
      }
      if (declaredTotal > limits.maxTotalBytes) {
        failure = new ImportFileError(`${zipName}: over ${megabytes(limits.maxTotalBytes)} uncompressed (the bound of one import)`);
        return;
      }
    }
    const chunks: Uint8Array[] = [];
    let size = 0;
    started.add(base);
    file.ondata = (error, chunk, final) => {
      if (failure !== null) return;
      if (error) {
        failure = new ImportFileError(`${zipName}: ${file.name} cannot be inflated (${error.message})`);
        return;
      }
      size += chunk.length;
      stats.inflatedBytes += chunk.length;
      if (size > maxEntry) {
        failure = new ImportFileError(
          `${zipName}: ${file.name} inflates over ${limits.maxRatio} times its compressed size (the bound of one entry)`,
        );
        file.terminate();
        return;
      }
      if (stats.inflatedBytes > limits.maxTotalBytes) {
        failure = new ImportFileError(`${zipName}: over ${megabytes(limits.maxTotalBytes)} uncompressed (the bound of one import)`);
        file.terminate();
        return;
      }
      chunks.push(chunk);
      if (final) found.set(base, concat(chunks, size));
    };
    file.start();
  };
  try {
    while (offset < zip.length && failure === null) {
      const end = Math.min(zip.length, offset + PUSH_BYTES);
      const chunk = zip.subarray(offset, end);
      offset = end;
      unzip.push(chunk, end === zip.length);
    }
  } catch (error) {
    if (failure === null) failure = new ImportFileError(`${zipName}: not a readable zip archive (${(error as Error).message})`);
  }
  if (failure !== null) throw failure;
  for (const base of started) {
    if (!found.has(base)) throw new ImportFileError(`${zipName}: ${base} is cut short (the archive is truncated)`);
  }
  return found;
}

/** Whether the archive ends with an end-of-central-directory record (within its comment's 64 KiB). */
function hasEndRecord(zip: Uint8Array): boolean {
  for (let at = zip.length - 22; at >= Math.max(0, zip.length - 22 - 0xffff); at -= 1) {
    if (zip[at] === 0x50 && zip[at + 1] === 0x4b && zip[at + 2] === 5 && zip[at + 3] === 6) return true;
  }
  return false;
}

function concat(chunks: Uint8Array[], size: number): Uint8Array {
  if (chunks.length === 1) return chunks[0]!;
  const out = new Uint8Array(size);
  let at = 0;
  for (const chunk of chunks) {
    out.set(chunk, at);
    at += chunk.length;
  }
  return out;
}
