/**
 * release.published (owner-api-v3.md, "Events" and Rule 4): recorded once each time a release
 * becomes public, whether at once (an owner's POST or PATCH with a published_at now or past) or
 * at its scheduled time with no request (publishDueReleaseEvents, a periodic task of every
 * server process). releases.publication_recorded (migration 2026-11-23T12-10-00) says the
 * current publication is announced; whoever sets it from false to true, an owner's write or one
 * instance's task, records the event in the same transaction, so exactly one does.
 */
import type { Kysely } from "kysely";
import type { Db } from "../../../db/connect.ts";
import type { Database } from "../../../db/schema.ts";
import { recordEvents } from "../../events/outbox.ts";
import { withProjectWriteLock } from "../../lib/data/project-write-lock.ts";
import { toAdminReleaseObject } from "./changelog.mapper.ts";
import { listAllReleaseFeatures } from "./changelog.owner.repository.ts";
import type { ReleaseRow } from "./changelog.repository.ts";

/**
 * How often a server process looks for scheduled releases whose time has come, in seconds: a
 * release's event is recorded at most this long after its published_at (the public routes show
 * the release from published_at itself, src/lib/data/next-publication.ts).
 */
export const RELEASE_PUBLICATION_INTERVAL_SECONDS = 5;

/** Releases claimed per project per transaction (a backlog after downtime is taken in batches). */
const CLAIM_BATCH = 100;

const releaseColumns = [
  "releases.id",
  "releases.name",
  "releases.slug",
  "releases.body",
  "releases.body_html",
  "releases.is_featured",
  "releases.published_at",
  "releases.view_count",
] as const;

/** Records release.published for `rows` (just claimed in `trx`), each as its AdminReleaseObject at `now`. */
async function recordPublished(trx: Db, projectId: number, rows: ReleaseRow[], now: Date): Promise<void> {
  if (rows.length === 0) return;
  const ordered = [...rows].sort((a, b) => (a.published_at?.getTime() ?? 0) - (b.published_at?.getTime() ?? 0) || a.id - b.id);
  const features = await listAllReleaseFeatures(
    trx,
    ordered.map((row) => row.id),
  );
  await recordEvents(
    trx,
    projectId,
    ordered.map((row) => ({
      type: "release.published" as const,
      object: toAdminReleaseObject(
        row,
        features.filter((feature) => feature.release_id === row.id),
        now,
      ),
    })),
  );
}

/**
 * After an owner's write to release `releaseId` in `trx` (create or update, the row written and
 * locked): records release.published when the release is public at `now` and its publication is
 * not yet announced; marks it unannounced when it is a draft or scheduled again (a later
 * publication is announced anew). The task may have announced it first: then nothing is recorded.
 */
export async function settleReleasePublication(trx: Db, projectId: number, releaseId: number, now: Date): Promise<void> {
  const announced = await trx
    .updateTable("releases")
    .set({ publication_recorded: true })
    .where("id", "=", releaseId)
    .where("publication_recorded", "=", false)
    .where("published_at", "<=", now)
    .returning([...releaseColumns])
    .execute();
  if (announced.length > 0) {
    await recordPublished(trx, projectId, announced, now);
    return;
  }
  await trx
    .updateTable("releases")
    .set({ publication_recorded: false })
    .where("id", "=", releaseId)
    .where("publication_recorded", "=", true)
    .where((eb) => eb.or([eb("published_at", "is", null), eb("published_at", ">", now)]))
    .execute();
}

/**
 * The periodic task: records release.published for every release whose scheduled time is at or
 * before `now` and whose publication is not yet announced, in every project, and returns how many
 * it recorded. Safe to run on any number of instances at once: each release is claimed by an
 * UPDATE of publication_recorded from false (rows another transaction holds are skipped, FOR
 * UPDATE SKIP LOCKED, and re-read as committed), in one transaction per project with the events,
 * holding the project's write lock like every write (so it never races a replace). Run it every
 * RELEASE_PUBLICATION_INTERVAL_SECONDS; a database error rejects (the caller logs and runs again).
 */
export async function publishDueReleaseEvents(db: Kysely<Database>, now: Date): Promise<number> {
  // Served by releases_publication_due_idx, which holds only releases not yet announced.
  const projects = await db
    .selectFrom("releases")
    .select("project_id")
    .distinct()
    .where("publication_recorded", "=", false)
    .where("published_at", "is not", null)
    .where("published_at", "<=", now)
    .execute();
  let recorded = 0;
  for (const { project_id: projectId } of projects) {
    for (;;) {
      const claimed = await withProjectWriteLock(db, projectId, async (trx) => {
        const rows = await trx
          .with("due", (q) =>
            q
              .selectFrom("releases")
              .select("id")
              .where("project_id", "=", projectId)
              .where("publication_recorded", "=", false)
              .where("published_at", "is not", null)
              .where("published_at", "<=", now)
              .orderBy("published_at")
              .limit(CLAIM_BATCH)
              .forUpdate()
              .skipLocked(),
          )
          .updateTable("releases")
          .from("due")
          .set({ publication_recorded: true })
          .whereRef("releases.id", "=", "due.id")
          .returning([...releaseColumns])
          .execute();
        await recordPublished(trx, projectId, rows, now);
        return rows.length;
      });
      recorded += claimed;
      if (claimed < CLAIM_BATCH) break;
    }
  }
  return recorded;
}
