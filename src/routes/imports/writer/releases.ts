/**
 * Changelog entries -> releases (imports-v3.md, "Sources", Canny): name, body (Markdown rendered
 * to body_html as the owner's release routes do), published at `publishedAt`, scheduled for
 * `scheduledFor` (published then by the scheduled publication, which records release.published),
 * otherwise a draft (no published_at); the linked features with the entry's changelog type (`new`
 * when none); slug from the name, made unique with -2, -3... A re-run leaves releases an earlier
 * run made as they are (rule 4 names no release field to update) and does not re-create one
 * deleted since.
 */
import { renderMarkdown } from "../../../lib/rules/markdown.ts";
import { defaultReleaseSlug, findReleaseBySlug, insertRelease, replaceReleaseFeatures } from "../../changelog/index.ts";
import type { ImportRelease } from "../import-data.ts";
import { existingIds, parseTime, type WriteContext } from "./context.ts";
import type { WrittenFeature } from "./features.ts";

export async function writeReleases(ctx: WriteContext, releases: ImportRelease[], features: Map<string, WrittenFeature>): Promise<void> {
  const alive = await existingIds(
    ctx.trx,
    "releases",
    ctx.projectId,
    releases.flatMap((r) => {
      const m = ctx.mapped.release.get(r.sourceId);
      return m ? [m.target] : [];
    }),
  );
  const seen = new Set<string>();
  for (const release of releases) {
    ctx.tick();
    if (seen.has(release.sourceId)) {
      ctx.counts.releases.skipped += 1;
      continue;
    }
    seen.add(release.sourceId);
    const m = ctx.mapped.release.get(release.sourceId);
    if (m) {
      if (alive.has(m.target)) ctx.counts.releases.updated += 1;
      else {
        ctx.counts.releases.skipped += 1;
        ctx.warn(release.path, "the release an earlier import made was deleted since; not re-created");
      }
      continue;
    }
    const name = release.name.trim().slice(0, 200);
    if (name === "") {
      ctx.counts.releases.skipped += 1;
      ctx.warn(release.path, "a changelog entry without a title is skipped");
      continue;
    }
    const published = release.publishedAt ?? release.scheduledFor;
    const publishedAt = published === null ? null : parseTime(published, ctx.now);
    if (publishedAt === undefined) {
      ctx.counts.releases.skipped += 1;
      ctx.warn(release.path, `date "${published}" does not parse: skipped`);
      continue;
    }
    const base = defaultReleaseSlug(name);
    let slug = base;
    for (let n = 2; (await findReleaseBySlug(ctx.trx, ctx.projectId, slug)) !== undefined; n += 1) slug = `${base.slice(0, 95)}-${n}`;
    const body = release.body === "" ? null : release.body;
    const id = await insertRelease(ctx.trx, {
      project_id: ctx.projectId,
      name,
      slug,
      body,
      body_html: renderMarkdown(body),
      published_at: publishedAt,
      // A release already out is not announced again; a scheduled one is when its time comes.
      publication_recorded: publishedAt !== null && publishedAt.getTime() <= ctx.now.getTime(),
      created_at: publishedAt !== null && publishedAt.getTime() <= ctx.now.getTime() ? publishedAt : ctx.now,
    });
    const linked: { feature_id: number; changelog_type: "new" | "improvement" | "fix" }[] = [];
    for (const sourceId of release.featureSourceIds) {
      const feature = features.get(sourceId);
      if (!feature) ctx.warn(release.path, `unknown post "${sourceId}": not linked`);
      else if (!linked.some((l) => l.feature_id === feature.id))
        linked.push({ feature_id: feature.id, changelog_type: release.changelogType ?? "new" });
    }
    await replaceReleaseFeatures(ctx.trx, id, linked);
    ctx.remember("release", release.sourceId, id);
    ctx.counts.releases.created += 1;
  }
}
