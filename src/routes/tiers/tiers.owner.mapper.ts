/** Rows to TierObject (owner-api-v3.md, "Objects"). */
import type { TierRow } from "./tiers.owner.repository.ts";
import type { TierObject } from "./tiers.owner.schemas.ts";

export function toTier(row: TierRow): TierObject {
  return {
    id: row.id,
    name: row.name,
    mrr_cents: row.mrr_cents,
    multiplier: row.multiplier,
    stripe_price_ids: row.stripe_price_ids,
    paddle_price_ids: row.paddle_price_ids,
    voter_count: row.voter_count ?? 0,
  };
}
