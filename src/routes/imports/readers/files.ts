/**
 * Turning a file's bytes into text and JSON for the readers, failing as imports-v3.md ("How an
 * import runs", rule 5) asks: a file that cannot be read throws ImportFileError saying what and
 * where (`posts.json: not JSON (...)`).
 */
import { ImportFileError } from "../import-data.ts";

const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false });

/** The bytes as UTF-8 text (a leading byte-order mark dropped); throws ImportFileError when not UTF-8. */
export function decodeText(bytes: Uint8Array, file: string): string {
  try {
    return utf8.decode(bytes);
  } catch {
    throw new ImportFileError(`${file}: not UTF-8 text`);
  }
}

/**
 * Parses `bytes` as JSON. `dropKeys` are removed while parsing (a reviver), so secrets such as
 * Fider's `api_key` never reach a kept object. Throws ImportFileError when not JSON.
 */
export function parseJsonFile(bytes: Uint8Array, file: string, dropKeys?: ReadonlySet<string>): unknown {
  const text = decodeText(bytes, file);
  try {
    return dropKeys ? JSON.parse(text, (key, value) => (dropKeys.has(key) ? undefined : value)) : JSON.parse(text);
  } catch (error) {
    throw new ImportFileError(`${file}: not JSON (${(error as Error).message})`);
  }
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** A string field, trimmed; null when absent, not a string or empty. */
export function text(value: unknown): string | null {
  if (typeof value !== "string") return null;
  const trimmed = value.trim();
  return trimmed === "" ? null : trimmed;
}

/** An id field: a non-empty string, or an integer written as a string (Fider's ids). */
export function idOf(value: unknown): string | null {
  if (typeof value === "number" && Number.isSafeInteger(value)) return String(value);
  return text(value);
}
