/**
 * Checks shared by the scenarios: the envelope shape, and that a failure body leaks nothing
 * (no stack trace, no SQL, no driver or file names, no secrets).
 */
import { expect } from "vitest";
import { errorStatus } from "../../../src/contract/errors.ts";
import type { ErrorAnswer } from "../../support/harness.ts";

/** Every body has exactly data, meta and error (contract, "Response envelope"). */
export function expectEnvelope(body: unknown): void {
  expect(body).toBeTypeOf("object");
  expect(body).not.toBeNull();
  expect(Object.keys(body as object).sort()).toEqual(["data", "error", "meta"]);
}

/** An error envelope with `code`, whose status is the contract's for that code. */
export function expectError(status: number, answer: unknown, code?: string): void {
  expectEnvelope(answer);
  // The envelope's keys were just checked; what the error holds is checked below.
  const body = answer as ErrorAnswer;
  expect(body.data).toBeNull();
  expect(body.meta).toBeNull();
  expect(body.error).toBeTypeOf("object");
  expect(Object.keys(body.error).sort()).toEqual(["code", "field", "message"]);
  expect(Object.keys(errorStatus)).toContain(body.error.code);
  if (code !== undefined) expect(body.error.code).toBe(code);
  if (body.error.code !== "not_found") expect(status).toBe(errorStatus[body.error.code as keyof typeof errorStatus]);
  else expect([404, 409]).toContain(status);
}

const LEAKS: RegExp[] = [
  /\bat\s+\S+\s+\(/, // stack frame "at fn (file:line)"
  /\bat\s+(file|node):/,
  /\.(ts|js|mjs):\d+/,
  /node_modules/,
  /\b(select|insert\s+into|update\s+\S+\s+set|delete\s+from)\b/i,
  /\b(postgres|postgresql|kysely|ioredis|ECONNREFUSED|ECONNRESET|syntax error|violates|relation\s+")/i,
  /\bsqlstate\b|\bcode\s*[:=]\s*'?\d{5}/i,
];

/** A 5xx body: the generic internal error and nothing else. */
export function expectNoLeak(text: string): void {
  for (const pattern of LEAKS) expect(text, `500 body leaks ${pattern}`).not.toMatch(pattern);
  const body = JSON.parse(text);
  expectEnvelope(body);
  expect(body.error.code).toBe("internal");
  expect(body.error.field).toBeNull();
}

/** None of `secrets` occurs in `text` (nor their URL-encoded or JSON-escaped forms). */
export function expectNoSecrets(text: string, secrets: string[]): void {
  for (const secret of secrets) {
    if (!secret) continue;
    const forms = new Set([secret, encodeURIComponent(secret), JSON.stringify(secret).slice(1, -1)]);
    for (const form of forms) expect(text.includes(form), `log contains a secret (${secret.slice(0, 8)}...)`).toBe(false);
  }
}
