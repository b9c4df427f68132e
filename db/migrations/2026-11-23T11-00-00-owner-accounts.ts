/**
 * Columns the owner API's accounts routes need (owner-api-v3.md, "Objects" and "Billing sync"):
 * - tiers.stripe_price_ids / paddle_price_ids: the billing systems' price ids that map a
 *   subscription to the tier (TierObject; snapshot `tiers[].stripe_price_ids`).
 * - projects.stripe_webhook_secret / paddle_webhook_secret: billing webhook signing secrets,
 *   write-only through PATCH /settings (snapshot `project.*_webhook_secret`).
 * - api_keys.hint: the last 4 characters of a key, stored when the key is made (keys are
 *   stored hashed, so the hint cannot be derived later); null for keys made before this
 *   migration or restored from a digest.
 * - voters_tier_idx: TierObject.voter_count counts a tier's voters, and deleting a tier sets
 *   its voters' tier_id to null; both find the voters by tier_id.
 * Frozen once shipped; add a new migration.
 */
import { type Kysely, sql } from "kysely";

const statements = [
  `ALTER TABLE tiers ADD COLUMN stripe_price_ids text[] NOT NULL DEFAULT '{}',
    ADD COLUMN paddle_price_ids text[] NOT NULL DEFAULT '{}'`,
  `ALTER TABLE projects ADD COLUMN stripe_webhook_secret text, ADD COLUMN paddle_webhook_secret text`,
  `ALTER TABLE api_keys ADD COLUMN hint text`,
  `CREATE INDEX voters_tier_idx ON voters (tier_id) WHERE tier_id IS NOT NULL`,
];

export async function up(db: Kysely<any>): Promise<void> {
  for (const statement of statements) await sql.raw(statement).execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const statement of [
    "DROP INDEX IF EXISTS voters_tier_idx",
    "ALTER TABLE api_keys DROP COLUMN IF EXISTS hint",
    "ALTER TABLE projects DROP COLUMN IF EXISTS stripe_webhook_secret, DROP COLUMN IF EXISTS paddle_webhook_secret",
    "ALTER TABLE tiers DROP COLUMN IF EXISTS stripe_price_ids, DROP COLUMN IF EXISTS paddle_price_ids",
  ])
    await sql.raw(statement).execute(db);
}
