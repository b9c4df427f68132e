/**
 * The events feed's reads (owner-api-v3.md, GET /events): a page of committed events through
 * src/events/outbox.ts committedEvents, and the count behind the page's Meta under the same
 * visibility horizon (events of transactions older than every one still running).
 */
import { type Kysely, sql } from "kysely";
import type { Database } from "../../../db/schema.ts";
import { type CommittedEventsQuery, committedEvents, type StoredEvent } from "../../events/outbox.ts";
import { type PageRequest, pageOffset } from "../../lib/http/pagination.ts";

export interface EventFeedFilter {
  projectId: number;
  types?: readonly string[] | undefined;
  after?: { txid: string; seq: string } | null;
}

/** Committed events matching `filter` (the same horizon committedEvents applies). */
async function countCommittedEvents(db: Kysely<Database>, filter: EventFeedFilter): Promise<number> {
  let query = db
    .selectFrom("events")
    .select(sql<number>`count(*)::int`.as("n"))
    .where("project_id", "=", filter.projectId)
    .where(sql<boolean>`txid < pg_snapshot_xmin(pg_current_snapshot())`);
  if (filter.after) query = query.where(sql<boolean>`(txid, seq) > (${filter.after.txid}::xid8, ${filter.after.seq}::bigint)`);
  if (filter.types && filter.types.length > 0) query = query.where("type", "in", [...filter.types]);
  return (await query.executeTakeFirstOrThrow()).n;
}

/**
 * One page of the project's committed events matching `filter`, oldest first, and how many
 * match in all. The page is read first: an event that becomes visible between the two reads
 * can only add to the total (it sorts after everything listed).
 */
export async function listEvents(
  db: Kysely<Database>,
  filter: EventFeedFilter,
  request: PageRequest,
): Promise<{ rows: StoredEvent[]; total: number }> {
  const query: CommittedEventsQuery = {
    projectId: filter.projectId,
    after: filter.after ?? null,
    types: filter.types ?? [],
    limit: request.per_page,
    offset: pageOffset(request),
  };
  const rows = await committedEvents(db, query);
  return { rows, total: await countCommittedEvents(db, filter) };
}
