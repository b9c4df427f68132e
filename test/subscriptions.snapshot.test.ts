/**
 * Subscriptions in the project snapshot (project-snapshot.md, "Webhooks, merges and engagement";
 * engagement-api-v3.md, "Snapshot and erasure"): `subscriptions: [{voter, feature, reason,
 * opted_out, created_at}]` is exported and imported with its opt-outs, an export restores with
 * `import --replace` and copies next to the original as they were, invalid entries are refused
 * naming their JSON path with nothing imported, and importing votes, comments or suggestions
 * subscribes nobody.
 */
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { exportSnapshot, portableSnapshot } from "../src/admin/snapshot-export.ts";
import { importSnapshot } from "../src/admin/snapshot-import.ts";
import { SnapshotValidationError } from "../src/admin/snapshot-validate.ts";
import { buildSnapshot, createTestContext, type SnapshotParts, type TestContext, uniqueSlug } from "./support/harness.ts";

let ctx: TestContext;

beforeAll(async () => {
  ctx = await createTestContext();
});
afterAll(() => ctx.close());

function parts(slug: string, subscriptions: unknown[]): SnapshotParts {
  return {
    project: { slug },
    voters: ["ada", "bob"].map((ref) => ({ ref, display_name: ref, anon_token: `anon-${ref}-${slug}` })),
    features: [
      { ref: "one", board: "roadmap", column: "c-open", heading: "One", author: "ada" },
      { ref: "two", board: "roadmap", column: "c-planned", heading: "Two" },
    ],
    votes: [{ voter: "bob", feature: "one" }],
    comments: [{ ref: "c1", feature: "two", voter: "ada", content: "Yes" }],
    subscriptions,
  };
}

/** The project's subscription rows as (feature heading, voter name, reason, opted_out, created_at). */
async function stored(slug: string) {
  const { rows } = await sql<{ heading: string; voter: string; reason: string; opted_out: boolean; created_at: Date }>`
    SELECT f.heading, v.display_name AS voter, s.reason, s.opted_out, s.created_at
    FROM subscriptions s JOIN features f ON f.id = s.feature_id JOIN voters v ON v.id = s.voter_id JOIN projects p ON p.id = s.project_id
    WHERE p.slug = ${slug} ORDER BY f.heading, v.display_name`.execute(ctx.db);
  return rows.map((row) => ({ ...row, created_at: row.created_at.toISOString() }));
}

describe("snapshot subscriptions", () => {
  it("imports nothing but the listed subscriptions: votes, comments and authors subscribe nobody", async () => {
    const slug = uniqueSlug("snapsub");
    await ctx.importProject(parts(slug, []));
    expect(await stored(slug)).toEqual([]);
  });

  it("exports and restores subscriptions with their opt-outs, reasons and times", async () => {
    const slug = uniqueSlug("snapsub");
    const project = await ctx.importProject(
      parts(slug, [
        { voter: "ada", feature: "one", reason: "author", created_at: "2026-10-01T09:00:00Z" },
        { voter: "bob", feature: "one", reason: "vote", opted_out: true, created_at: "2026-10-02T09:00:00Z" },
        { voter: "ada", feature: "two", reason: "merge", opted_out: false, created_at: "2026-10-03T09:00:00.123Z" },
        { voter: "bob", feature: "two", reason: "manual" },
      ]),
    );
    const imported = await stored(slug);
    expect(imported.map((row) => [row.heading, row.voter, row.reason, row.opted_out])).toEqual([
      ["One", "ada", "author", false],
      ["One", "bob", "vote", true],
      ["Two", "ada", "merge", false],
      ["Two", "bob", "manual", false],
    ]);
    expect(imported[2]!.created_at).toBe("2026-10-03T09:00:00.123Z");

    // A PUT after the import: the export carries the live state.
    const put = await ctx.send(
      "PUT",
      `/api/v3/projects/${slug}/features/${project.ids.ids.features.one}/subscription`,
      project.secretKey,
      undefined,
      { "X-VF-Anon": `anon-bob-${slug}` },
    );
    expect(put.status).toBe(200);
    const live = await stored(slug);

    const exported = await exportSnapshot(ctx.db, slug);
    const ids = project.ids.ids;
    const voterRef = (ref: string) => exported.voters.find((voter) => voter.voter_id === ids.voters[ref])!.ref;
    const featureRef = (ref: string) => exported.features.find((feature) => feature.id === ids.features[ref])!.ref;
    expect(exported.subscriptions).toEqual(
      expect.arrayContaining([
        { voter: voterRef("ada"), feature: featureRef("one"), reason: "author", opted_out: false, created_at: "2026-10-01T09:00:00.000Z" },
        { voter: voterRef("bob"), feature: featureRef("one"), reason: "manual", opted_out: false, created_at: expect.any(String) },
        { voter: voterRef("ada"), feature: featureRef("two"), reason: "merge", opted_out: false, created_at: "2026-10-03T09:00:00.123Z" },
      ]),
    );
    expect(exported.subscriptions).toHaveLength(4);

    // Restore in place, and a copy next to it.
    await importSnapshot(ctx.db, exported, { replace: true });
    expect(await stored(slug)).toEqual(live);
    const copySlug = uniqueSlug("snapcopy");
    const portable = portableSnapshot(exported);
    await importSnapshot(ctx.db, { ...portable, project: { ...portable.project, slug: copySlug } }, {});
    expect(await stored(copySlug)).toEqual(live);
  });

  it("refuses invalid entries naming their JSON path, and imports nothing", async () => {
    const shapes = buildSnapshot(
      parts(uniqueSlug("snapbad"), [
        { voter: "ada", feature: "one", reason: "liked" },
        { voter: "ada", feature: "two", reason: "vote", opted_out: "yes" },
        { voter: "ada", feature: "two", reason: "vote", created_at: "yesterday" },
        { feature: "two", reason: "vote" },
      ]),
    );
    const shapeFaults = await refusal(shapes);
    expect([...new Set(shapeFaults.map((issue) => issue.path))]).toEqual([
      "subscriptions[0].reason",
      "subscriptions[1].opted_out",
      "subscriptions[2].created_at",
      "subscriptions[3].voter",
    ]);

    const references = buildSnapshot(
      parts(uniqueSlug("snapbad"), [
        { voter: "zed", feature: "one", reason: "vote" },
        { voter: "ada", feature: "three", reason: "vote" },
        { voter: "ada", feature: "one", reason: "vote" },
        { voter: "ada", feature: "one", reason: "manual", opted_out: true },
      ]),
    );
    const referenceFaults = await refusal(references);
    expect(referenceFaults).toEqual([
      { path: "subscriptions[0].voter", message: 'no voter with ref "zed"' },
      { path: "subscriptions[1].feature", message: 'no feature with ref "three"' },
      { path: "subscriptions[3]", message: expect.stringContaining("subscriptions[2]") },
    ]);
    for (const snapshot of [shapes, references]) {
      const { rows } = await sql`SELECT 1 FROM projects WHERE slug = ${snapshot.project.slug}`.execute(ctx.db);
      expect(rows).toEqual([]);
    }
  });
});

async function refusal(snapshot: unknown) {
  try {
    await importSnapshot(ctx.db, snapshot, {});
  } catch (error) {
    expect(error).toBeInstanceOf(SnapshotValidationError);
    return (error as SnapshotValidationError).issues;
  }
  throw new Error("the snapshot was accepted");
}
