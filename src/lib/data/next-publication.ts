/**
 * When a project's public answers next change with no request: the earliest published_at still
 * in the future (owner-api-v3.md, Rule 4: a scheduled release becomes public by itself at its
 * time). The shared read cache stamps each answer it keeps with this moment and stops serving it
 * then, on every instance alike, since each computes the moment from the shared database; no
 * timer and no write is needed. Kept in the app's caches (cleared on every instance by each owner
 * write, which is how a release's published_at changes) and looked up again once it has passed
 * (or for a build that started before the last publication the lookup saw).
 */
import { sql } from "kysely";
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
  const load = async (): Promise<NextPublication> => ({ after: after.getTime(), ...(await publicationsAround(deps.db, projectId, after)) });
  let known = await cache.remember(key, load);
  // The lookup answers for every moment between the last publication at or before the moment
  // it looked at and the next one after it: no release is published in between. Builds that
  // started a little before the lookup (concurrent misses) are inside that span too.
  const at = after.getTime();
  if ((known.previous !== null && known.previous > at) || (known.next !== null && known.next <= at)) {
    cache.delete(key);
    known = await cache.remember(key, load);
  }
  return known.next;
}

/**
 * The publications of the project on both sides of `after`: the latest published_at at or
 * before it and the earliest strictly after it (the next moment a scheduled release becomes
 * public by itself, Rule 4), in ms since the epoch, null where there is none. One statement over
 * releases_project_idx's prefix (a project has few releases).
 */
export async function publicationsAround(
  db: Db,
  projectId: number,
  after: Date,
): Promise<{ previous: number | null; next: number | null }> {
  const row = await db
    .selectFrom("releases")
    .select([
      sql<Date | string | null>`max(published_at) FILTER (WHERE published_at <= ${after})`.as("previous"),
      sql<Date | string | null>`min(published_at) FILTER (WHERE published_at > ${after})`.as("next"),
    ])
    .where("project_id", "=", projectId)
    .where("published_at", "is not", null)
    .executeTakeFirst();
  const ms = (value: Date | string | null | undefined) => (value ? new Date(value).getTime() : null);
  return { previous: ms(row?.previous), next: ms(row?.next) };
}
