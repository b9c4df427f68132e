/**
 * When a project's public answers next change with no request: the earliest published_at still
 * in the future (owner-api-v3.md, Rule 4: a scheduled release becomes public by itself at its
 * time). The shared read cache stamps each answer it keeps with this moment and stops serving it
 * then, on every instance alike, since each computes the moment from the shared database; no
 * timer and no write is needed. Kept in the app's caches (cleared on every instance by each owner
 * write, which is how a release's published_at changes) and looked up again once it has passed.
 */
import type { Db } from "../../../db/connect.ts";
import type { AppDeps } from "../http/context.ts";
import type { NextPublication } from "./app-caches.ts";

/**
 * The earliest published_at of the project after `after` in ms since the epoch, or null: the
 * moment an answer built at `after` stops being current. One indexed query per project per
 * PROJECT_CACHE_SECONDS or per passed publication time, whichever comes first.
 */
export async function nextPublicationAfter(deps: Pick<AppDeps, "db" | "caches">, projectId: number, after: Date): Promise<number | null> {
  const cache = deps.caches.nextPublication;
  const key: [number] = [projectId];
  const load = async (): Promise<NextPublication> => {
    const next = await nextScheduledPublication(deps.db, projectId, after);
    return { after: after.getTime(), next: next?.getTime() ?? null };
  };
  let known = await cache.remember(key, load);
  // Cached for an earlier moment whose next publication has passed since, or for a later one.
  if (known.after > after.getTime() || (known.next !== null && known.next <= after.getTime())) {
    cache.delete(key);
    known = await cache.remember(key, load);
  }
  return known.next;
}

/**
 * The earliest published_at of the project strictly after `after`, or null: the next moment a
 * scheduled release becomes public by itself (Rule 4). Served by releases_project_idx's prefix.
 */
export async function nextScheduledPublication(db: Db, projectId: number, after: Date): Promise<Date | null> {
  const row = await db
    .selectFrom("releases")
    .select((eb) => eb.fn.min("published_at").as("next"))
    .where("project_id", "=", projectId)
    .where("published_at", ">", after)
    .executeTakeFirst();
  return row?.next ? new Date(row.next) : null;
}
