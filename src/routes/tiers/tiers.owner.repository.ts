/**
 * Tier queries and writes (owner-api-v3.md, /tiers). Writes take a `db | trx` and run in the
 * caller's transaction. A tier's amount and multiplier are joined into the revenue figures at
 * read time (feature_tier_votes holds voter-side sums only), so changing a tier changes the
 * revenue routes at once and rewrites nothing; votes keep the weight they were cast with.
 */
import { sql } from "kysely";
import type { Db } from "../../../db/connect.ts";
import { type PageRequest, pageOffset } from "../../lib/http/pagination.ts";
import type { TierCreateBody, TierPatchBody } from "./tiers.owner.schemas.ts";

/** Advisory lock class of tier writes ("fb" + 2): one tier write per project at a time. */
const TIER_LOCK_CLASS = 0x66620002;

function selectTiers(db: Db) {
  return db
    .selectFrom("tiers")
    .select((eb) => [
      "tiers.id",
      "tiers.name",
      "tiers.mrr_cents",
      "tiers.multiplier",
      "tiers.stripe_price_ids",
      "tiers.paddle_price_ids",
      eb.selectFrom("voters").select(sql<number>`count(*)::int`.as("n")).whereRef("voters.tier_id", "=", "tiers.id").as("voter_count"),
    ]);
}

export type TierRow = Awaited<ReturnType<ReturnType<typeof selectTiers>["executeTakeFirstOrThrow"]>>;

/** One page of the project's tiers in creation order, and the total. */
export async function listTiers(db: Db, projectId: number, request: PageRequest) {
  const rows = await selectTiers(db)
    .where("tiers.project_id", "=", projectId)
    .orderBy("tiers.id", "asc")
    .limit(request.per_page)
    .offset(pageOffset(request))
    .execute();
  const { total } = await db
    .selectFrom("tiers")
    .select(sql<number>`count(*)::int`.as("total"))
    .where("project_id", "=", projectId)
    .executeTakeFirstOrThrow();
  return { rows, total };
}

export async function findTier(db: Db, projectId: number, tierId: number): Promise<TierRow | undefined> {
  return selectTiers(db).where("tiers.project_id", "=", projectId).where("tiers.id", "=", tierId).executeTakeFirst();
}

/**
 * The first of `ids` (per system) that another tier of the project than `exceptTierId` already
 * maps, as the field naming it; undefined when none is taken. Billing sync maps a price to one
 * tier, so a price id may belong to one tier of a project only.
 */
async function takenPriceId(
  trx: Db,
  projectId: number,
  exceptTierId: number | null,
  ids: { stripe_price_ids?: string[] | undefined; paddle_price_ids?: string[] | undefined },
): Promise<{ field: "stripe_price_ids" | "paddle_price_ids"; id: string } | undefined> {
  await sql`SELECT pg_advisory_xact_lock(${TIER_LOCK_CLASS}::int, ${projectId}::int)`.execute(trx);
  for (const field of ["stripe_price_ids", "paddle_price_ids"] as const) {
    const wanted = ids[field];
    if (!wanted || wanted.length === 0) continue;
    const clash = await trx
      .selectFrom("tiers")
      .select(sql<string>`(SELECT p FROM unnest(${sql.ref(`tiers.${field}`)}) AS p WHERE p = ANY(${wanted}::text[]) LIMIT 1)`.as("id"))
      .where("project_id", "=", projectId)
      .where(sql<boolean>`${sql.ref(`tiers.${field}`)} && ${wanted}::text[]`)
      .$if(exceptTierId !== null, (q) => q.where("id", "<>", exceptTierId!))
      .executeTakeFirst();
    if (clash) return { field, id: clash.id };
  }
  return undefined;
}

export type TierWriteResult =
  | { kind: "done"; row: TierRow }
  | { kind: "not_found" }
  | { kind: "price_taken"; field: "stripe_price_ids" | "paddle_price_ids"; id: string };

/** Creates a tier of the project inside `trx`; `price_taken` when a price id belongs to another tier. */
export async function createTier(trx: Db, projectId: number, input: TierCreateBody): Promise<TierWriteResult> {
  const taken = await takenPriceId(trx, projectId, null, input);
  if (taken) return { kind: "price_taken", ...taken };
  const { id } = await trx
    .insertInto("tiers")
    .values({ project_id: projectId, ...input })
    .returning("id")
    .executeTakeFirstOrThrow();
  return { kind: "done", row: (await findTier(trx, projectId, id))! };
}

/** Applies `patch` to tier `tierId` of the project inside `trx` (price id lists are replaced whole). */
export async function updateTier(trx: Db, projectId: number, tierId: number, patch: TierPatchBody): Promise<TierWriteResult> {
  const taken = await takenPriceId(trx, projectId, tierId, patch);
  if (taken) return { kind: "price_taken", ...taken };
  const updated =
    Object.keys(patch).length === 0
      ? await trx.selectFrom("tiers").select("id").where("id", "=", tierId).where("project_id", "=", projectId).executeTakeFirst()
      : await trx
          .updateTable("tiers")
          .set(patch)
          .where("id", "=", tierId)
          .where("project_id", "=", projectId)
          .returning("id")
          .executeTakeFirst();
  if (!updated) return { kind: "not_found" };
  return { kind: "done", row: (await findTier(trx, projectId, tierId))! };
}

/**
 * Deletes tier `tierId` of the project inside `trx`: its voters lose the tier (tier_id set null
 * by the foreign key) and its revenue aggregates go with it by cascade. False if no such tier.
 */
export async function deleteTier(trx: Db, projectId: number, tierId: number): Promise<boolean> {
  const removed = await trx
    .deleteFrom("tiers")
    .where("id", "=", tierId)
    .where("project_id", "=", projectId)
    .returning("id")
    .executeTakeFirst();
  return removed !== undefined;
}
