/**
 * The bundled demo project "Lumen" (scripts/demo/demo-snapshot.json, written by
 * scripts/demo/generate-demo.ts). Its keys are public on purpose: they exist so that a fresh
 * checkout can be tried with curl. Never import the demo into a production database.
 */
import { readFileSync } from "node:fs";
import { DEMO_EMBED_KEY, DEMO_SECRET_KEY } from "../lib/rules/published-demo-keys.ts";
import { type SnapshotDocument, snapshotSchema } from "./snapshot.schema.ts";

export { DEMO_EMBED_KEY, DEMO_SECRET_KEY };

export const DEMO_SLUG = "lumen";
export const DEMO_ALLOWED_ORIGINS = ["http://localhost:3000"];
/** X-VF-Anon token of one demo voter with votes, comments and a dismissal already recorded. */
export const DEMO_ANON_TOKEN = "fb_anon_demo_lumen_voter_0001";
/** HS256 secret the demo project accepts voter SSO tokens (X-VF-Token) signed with. */
export const DEMO_SSO_SECRET = "lumen-demo-sso-secret-not-for-production";

const DEMO_FILE = new URL("../../scripts/demo/demo-snapshot.json", import.meta.url);

/**
 * Reads and shape-checks the bundled demo snapshot (synchronous; awaiting it works too).
 * Returns the document with defaults filled in, ready for importSnapshot. Throws when the
 * file is missing or malformed.
 */
export function loadDemoSnapshot(): SnapshotDocument {
  return snapshotSchema.parse(JSON.parse(readFileSync(DEMO_FILE, "utf8")));
}
