/** Rows to the owner's voter object (owner-api-v3.md, "Objects": AdminVoterObject). */
import { rfc3339 } from "../../lib/http/timestamps.ts";
import { toRevenueVoter } from "../revenue/index.ts";
import type { AdminVoterRow } from "./voters.owner.repository.ts";
import type { AdminVoterObject } from "./voters.owner.schemas.ts";

/**
 * AdminVoterObject: the RevenueVoterObject fields as the revenue route maps them (customer_id
 * unfiltered: the Stripe id if present, else the Paddle id) without `votes`, plus the admin fields.
 */
export function toAdminVoter(row: AdminVoterRow, currencySymbol: string): AdminVoterObject {
  const { votes: _votes, ...revenue } = toRevenueVoter(row, [], currencySymbol, undefined);
  return {
    ...revenue,
    kind: row.kind,
    email: row.email,
    sso_id: row.sso_id,
    role: row.role,
    banned: row.banned,
    email_unsubscribed: row.email_unsubscribed,
    mrr_override_cents: row.mrr_override_cents,
    stripe_customer_id: row.stripe_customer_id,
    paddle_customer_id: row.paddle_customer_id,
    created_at: rfc3339(row.created_at),
  };
}
