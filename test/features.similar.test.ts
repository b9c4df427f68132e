/**
 * Similar features (engagement-api-v3.md, "Similar features"; the score in docs/decisions.md):
 * GET /projects/{slug}/features/similar and GET /admin/features/{id}/similar. A corpus of
 * near-duplicates (case and punctuation, typos, plurals, reordered words), partial matches,
 * description matches, an unrelated heading and a synonym; the threshold, limit and its 422s;
 * visibility exactly as the public list (hidden denied column, awaiting review, archived),
 * merged duplicates excluded, the owner's merge candidates, ties by vote_count, ETag and
 * freshness after a write.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { findSimilarAdminFeatures } from "../src/routes/features/index.ts";
import {
  type Answer,
  createTestContext,
  type ErrorAnswer,
  type ImportedProject,
  type OwnerErrorAnswer,
  body as parse,
  type SnapshotParts,
  type TestContext,
  uniqueSlug,
} from "./support/harness.ts";

type Similar = Answer<"/api/v3/projects/{slug}/features/similar", "get">;
type AdminSimilar = Answer<"/api/v3/projects/{slug}/admin/features/{id}/similar", "get">;

const at = "2026-06-01T10:00:00Z";
const feature = (ref: string, heading: string, extra: Record<string, unknown> = {}) => ({
  ref,
  board: "roadmap",
  column: "c-planned",
  heading,
  created_at: at,
  ...extra,
});

/**
 * The corpus. Near-duplicates of "Export to CSV": e-case (same apart from case and punctuation),
 * e-typo (one transposition), e-plural, e-reorder; partial: e-partial (shares two of four
 * words), e-desc (only its description matches); e-weak shares one word of four; e-synonym means
 * the same in other words; e-unrelated shares nothing. Visibility cases: e-pending (awaiting
 * review, by dan), e-denied (the denied column, hidden with show_denied false), e-archived,
 * e-merged (merged into e-case by the test). Ties: t1..t3 have the same heading and 1, 3, 2 votes.
 */
function corpus(settings: Record<string, unknown>): SnapshotParts {
  const slug = uniqueSlug("similar");
  return {
    project: { slug, settings },
    voters: ["ada", "bob", "cy", "dan"].map((ref) => ({ ref, anon_token: `anon-${ref}-${slug}` })),
    features: [
      feature("e-case", "  export to CSV!!! "),
      feature("e-typo", "Exprot to CSV"),
      feature("e-plural", "Exports to CSV"),
      feature("e-reorder", "CSV export"),
      feature("e-partial", "Export reports to CSV files"),
      feature("e-desc", "Spreadsheet download", { description: "Let us export to CSV from every board" }),
      feature("e-weak", "Export invoices as PDF"),
      feature("e-synonym", "Download a spreadsheet file"),
      feature("e-unrelated", "Zoom integration"),
      feature("e-pending", "Export to CSV", { column: "c-open", is_approved: false, author: "dan" }),
      feature("e-denied", "Export to CSV", { column: "c-denied" }),
      feature("e-archived", "Export to CSV", { column: null, status: "archived" }),
      feature("e-merged", "Export to CSV?"),
      feature("m-email", "Email"),
      feature("m-emial", "Emial"),
      feature("m-tags", "Tags"),
      feature("m-boxes", "Boxes"),
      feature("t1", "Slack alerts"),
      feature("t2", "Slack alerts"),
      feature("t3", "Slack alerts"),
    ],
    votes: [
      { voter: "ada", feature: "e-case", created_at: at },
      { voter: "ada", feature: "t1", created_at: at },
      { voter: "ada", feature: "t2", created_at: at },
      { voter: "bob", feature: "t2", created_at: at },
      { voter: "cy", feature: "t2", created_at: at },
      { voter: "ada", feature: "t3", created_at: at },
      { voter: "bob", feature: "t3", created_at: at },
    ],
  };
}

let ctx: TestContext;
/** show_denied false, show_archived false. */
let main: ImportedProject;
/** show_archived true (an archived feature is public, a merged one still excluded), show_votes false. */
let shown: ImportedProject;

beforeAll(async () => {
  ctx = await createTestContext();
  main = await ctx.importProject(corpus({ show_denied: false, show_archived: false }));
  shown = await ctx.importProject(corpus({ show_archived: true, show_votes: false }));
  for (const project of [main, shown]) {
    const merged = await ctx.send(
      "POST",
      `/api/v3/projects/${project.slug}/admin/features/${fid(project, "e-merged")}/merge`,
      project.secretKey,
      {
        into_id: fid(project, "e-case"),
      },
    );
    expect(merged.status).toBe(200);
  }
});
afterAll(() => ctx.close());

const fid = (project: ImportedProject, ref: string): number => project.ids.ids.features[ref];
const token = (project: ImportedProject, voter: string) => ({ "X-VF-Anon": `anon-${voter}-${project.slug}` });

async function similar(project: ImportedProject, query: string, headers: Record<string, string> = {}) {
  const response = await ctx.get(`/api/v3/projects/${project.slug}/features/similar?${query}`, project.secretKey, headers);
  const answer = await parse<Similar>(response);
  expect(response.status, JSON.stringify(answer)).toBe(200);
  expect(answer.meta).toBeNull();
  return answer.data;
}

/** ref -> similarity of an answer, in answer order. */
function scores(project: ImportedProject, data: { id: number; similarity: number }[]): [string, number][] {
  const refOf = new Map(Object.entries(project.ids.ids.features as Record<string, number>).map(([ref, id]) => [id, ref]));
  return data.map((item) => [refOf.get(item.id) ?? String(item.id), item.similarity]);
}

async function similarRefs(project: ImportedProject, q: string, limit = 20, headers: Record<string, string> = {}) {
  return scores(project, await similar(project, `q=${encodeURIComponent(q)}&limit=${limit}`, headers));
}

describe("the score's guarantees", () => {
  it("a heading equal to q apart from case, surrounding white space and punctuation scores exactly 1", async () => {
    const found = new Map(await similarRefs(main, "Export to csv"));
    expect(found.get("e-case")).toBe(1);
    expect(new Map(await similarRefs(main, "  ...EXPORT TO CSV?! ")).get("e-case")).toBe(1);
  });

  it("one typo, a plural ending and reordered words score at least 0.5 (a near-duplicate: 0.85 to 0.95)", async () => {
    const found = new Map(await similarRefs(main, "Export to CSV"));
    for (const ref of ["e-typo", "e-plural", "e-reorder"]) {
      expect(found.get(ref), ref).toBeGreaterThanOrEqual(0.85);
      expect(found.get(ref), ref).toBeLessThan(1);
    }
  });

  it("holds for single short words too: a transposition in 'Email', plurals in 'Tag' and 'Box'", async () => {
    expect(new Map(await similarRefs(main, "email")).get("m-emial")).toBeGreaterThanOrEqual(0.5);
    expect(new Map(await similarRefs(main, "Emial")).get("m-email")).toBeGreaterThanOrEqual(0.5);
    expect(new Map(await similarRefs(main, "tag")).get("m-tags")).toBeGreaterThanOrEqual(0.5);
    expect(new Map(await similarRefs(main, "box")).get("m-boxes")).toBeGreaterThanOrEqual(0.5);
  });

  it("ranks partial matches below near-duplicates, and the description counts less than the heading", async () => {
    const answer = await similarRefs(main, "Export to CSV");
    const found = new Map(answer);
    expect(found.get("e-partial")).toBeGreaterThanOrEqual(0.3);
    expect(found.get("e-partial")).toBeLessThanOrEqual(0.8);
    // Every word of q is in e-desc's description, none in its heading: D = 1, H = 0 -> 0.8 x 0.5.
    expect(found.get("e-desc")).toBe(0.4);
    const similarities = answer.map(([, similarity]) => similarity);
    expect(similarities).toEqual([...similarities].sort((a, b) => b - a));
    expect(answer.slice(0, 5).map(([ref]) => ref)).toEqual(["e-case", ...answer.slice(1, 5).map(([ref]) => ref)]);
  });

  it("finds a heading sharing most but not all of q's words (a partial match by shared words)", async () => {
    // q's words export, report, excel; e-partial's export, report, csv, file: Jaccard 2/5 -> 0.32+.
    const found = new Map(await similarRefs(main, "Export reports to Excel"));
    expect(found.get("e-partial")).toBeGreaterThanOrEqual(0.32);
    expect(found.get("e-partial")).toBeLessThanOrEqual(0.8);
  });

  it("lists nothing under 0.3: a heading sharing one word of four, unrelated text, a synonym", async () => {
    const found = new Map(await similarRefs(main, "Export to CSV"));
    expect(found.has("e-weak")).toBe(false);
    expect(found.has("e-unrelated")).toBe(false);
    // Synonyms are not supported: "Download a spreadsheet file" shares no word and no trigram.
    expect(found.has("e-synonym")).toBe(false);
    expect(await similarRefs(main, "Quarterly zebra")).toEqual([]);
  });

  it("every listed similarity is between 0.3 and 1 with at most 3 decimals", async () => {
    for (const [, similarity] of await similarRefs(main, "CSV export for reports")) {
      expect(similarity).toBeGreaterThanOrEqual(0.3);
      expect(similarity).toBeLessThanOrEqual(1);
      expect(Math.round(similarity * 1000) / 1000).toBe(similarity);
    }
  });
});

describe("ordering and limit", () => {
  it("orders equal similarities by vote_count, highest first", async () => {
    const answer = await similar(main, "q=slack%20alerts");
    expect(scores(main, answer)).toEqual([
      ["t2", 1],
      ["t3", 1],
      ["t1", 1],
    ]);
    expect(answer.map((item) => item.vote_count)).toEqual([3, 2, 1]);
  });

  it("limit defaults to 5 and caps the answer", async () => {
    expect((await similar(main, "q=Export%20to%20CSV")).length).toBe(5);
    expect((await similar(main, "q=Export%20to%20CSV&limit=2")).map((item) => item.id)).toEqual(
      (await similar(main, "q=Export%20to%20CSV&limit=20")).slice(0, 2).map((item) => item.id),
    );
    expect((await similar(main, "q=Export%20to%20CSV&limit=1")).length).toBe(1);
  });

  it("every limit answers the head of the full ranking: partial matches follow the near-duplicates the reader may see", async () => {
    // Eight features are near-duplicates of q; four are hidden from the public (awaiting review,
    // the hidden denied column, archived) or merged, so none of them takes a place in the
    // answer: with limit 6 the two partial matches follow the four visible near-duplicates.
    const full = await similarRefs(main, "Export to CSV", 20);
    expect(full.slice(0, 4).every(([, similarity]) => similarity >= 0.85)).toBe(true);
    expect(
      full
        .slice(4, 6)
        .map(([ref]) => ref)
        .sort(),
    ).toEqual(["e-desc", "e-partial"]);
    for (const limit of [3, 4, 5, 6]) expect(await similarRefs(main, "Export to CSV", limit)).toEqual(full.slice(0, limit));
  });

  it.each([
    ["", "q"],
    ["q=", "q"],
    ["q=%20%20%20", "q"],
    [`q=${"a".repeat(255)}`, "q"],
    ["q=csv&limit=0", "limit"],
    ["q=csv&limit=21", "limit"],
    ["q=csv&limit=five", "limit"],
    ["q=csv&limit=2.5", "limit"],
  ])("?%s answers 422 naming %s", async (query, field) => {
    const response = await ctx.get(`/api/v3/projects/${main.slug}/features/similar?${query}`, main.secretKey);
    expect(response.status).toBe(422);
    expect(await parse<ErrorAnswer>(response)).toEqual({
      data: null,
      meta: null,
      error: { code: "validation_failed", field, message: expect.any(String) },
    });
  });

  it("takes 254 characters after trimming", async () => {
    expect(await similar(main, `q=%20${"b".repeat(254)}%20`)).toEqual([]);
  });
});

describe("visibility: exactly the public list's", () => {
  it("leaves out the hidden denied column, suggestions awaiting review, archived and merged features", async () => {
    const refs = (await similarRefs(main, "Export to CSV")).map(([ref]) => ref);
    for (const ref of ["e-pending", "e-denied", "e-archived", "e-merged"]) expect(refs, ref).not.toContain(ref);
  });

  it("shows archived features where the project shows them, never a merged one", async () => {
    const refs = (await similarRefs(shown, "Export to CSV")).map(([ref]) => ref);
    expect(refs).toContain("e-archived");
    expect(refs).toContain("e-denied");
    expect(refs).not.toContain("e-merged");
  });

  it("shows a voter their own suggestion awaiting review, nobody else", async () => {
    expect((await similarRefs(main, "Export to CSV", 20, token(main, "dan"))).map(([ref]) => ref)).toContain("e-pending");
    expect((await similarRefs(main, "Export to CSV", 20, token(main, "bob"))).map(([ref]) => ref)).not.toContain("e-pending");
  });

  it("answers every FeatureObject field as the list does, with has_voted for the voter and the show_* rules", async () => {
    const [first] = await similar(main, "q=Export%20to%20CSV&limit=1", token(main, "ada"));
    const list = await ctx.get(`/api/v3/projects/${main.slug}/features?scope=project&per_page=100`, main.secretKey, token(main, "ada"));
    const listed = (await parse<Answer<"/api/v3/projects/{slug}/features", "get">>(list)).data.find((item) => item.id === first!.id);
    expect(first).toEqual({ ...listed, similarity: 1 });
    expect(first!.has_voted).toBe(true);
    expect((await similar(main, "q=Export%20to%20CSV&limit=1"))[0]!.has_voted).toBe(false);
    const [hidden] = await similar(shown, "q=Export%20to%20CSV&limit=1");
    expect(hidden).toMatchObject({ vote_count: null, score: null, similarity: 1 });
  });
});

describe("reads: ETag and freshness", () => {
  it("answers 304 to its ETag, and a read after a write sees the write", async () => {
    const path = `/api/v3/projects/${main.slug}/features/similar?q=Offline%20sync%20mode`;
    const before = await ctx.get(path, main.secretKey);
    const etag = before.headers.get("ETag");
    expect(etag).toBeTruthy();
    expect((await parse<Similar>(before)).data).toEqual([]);
    expect((await ctx.get(path, main.secretKey, { "If-None-Match": etag! })).status).toBe(304);
    const created = await ctx.send("POST", `/api/v3/projects/${main.slug}/admin/features`, main.secretKey, {
      heading: "Offline sync mode",
      status: "planned",
    });
    expect(created.status).toBe(201);
    const after = await parse<Similar>(await ctx.get(path, main.secretKey));
    expect(after.data.map((item) => [item.heading, item.similarity])).toEqual([["Offline sync mode", 1]]);
    const renamed = await ctx.send("PATCH", `/api/v3/projects/${main.slug}/admin/features/${after.data[0]!.id}`, main.secretKey, {
      heading: "Offline mode for sync",
    });
    expect(renamed.status).toBe(200);
    const again = await parse<Similar>(await ctx.get(path, main.secretKey));
    expect(again.data.map((item) => item.similarity)).toEqual([expect.any(Number)]);
    expect(again.data[0]!.similarity).toBeLessThan(1);
  });
});

describe("owner: GET /admin/features/{id}/similar", () => {
  async function adminSimilar(project: ImportedProject, ref: string, query = "limit=20") {
    const response = await ctx.get(
      `/api/v3/projects/${project.slug}/admin/features/${fid(project, ref)}/similar?${query}`,
      project.secretKey,
    );
    const answer = await parse<AdminSimilar>(response);
    expect(response.status, JSON.stringify(answer)).toBe(200);
    expect(answer.meta).toBeNull();
    return answer.data;
  }

  it("lists every other feature by the same rule, public or not, without the feature itself or merged ones", async () => {
    const answer = await adminSimilar(main, "e-case");
    const found = new Map(scores(main, answer));
    expect(found.has("e-case")).toBe(false);
    expect(found.has("e-merged")).toBe(false);
    for (const ref of ["e-pending", "e-denied", "e-archived"]) expect(found.get(ref), ref).toBe(1);
    for (const ref of ["e-typo", "e-plural", "e-reorder"]) expect(found.get(ref), ref).toBeGreaterThanOrEqual(0.85);
    const pending = answer.find((item) => item.id === fid(main, "e-pending"))!;
    expect(pending).toMatchObject({ is_public: false, is_approved: false, merged_into: null, has_voted: false });
    expect(typeof pending.author_voter_id).toBe("string");
  });

  it("orders ties by vote_count and takes limit", async () => {
    expect(scores(main, await adminSimilar(main, "t1"))).toEqual([
      ["t2", 1],
      ["t3", 1],
    ]);
    expect((await adminSimilar(main, "e-case", "")).length).toBe(5);
    expect((await adminSimilar(main, "e-case", "limit=2")).length).toBe(2);
  });

  it("answers 404 for an unknown feature or one of another project, 422 for a bad limit", async () => {
    const unknown = await ctx.get(`/api/v3/projects/${main.slug}/admin/features/2147483647/similar`, main.secretKey);
    expect(unknown.status).toBe(404);
    expect((await parse<OwnerErrorAnswer>(unknown)).error?.code).toBe("not_found");
    const foreign = await ctx.get(`/api/v3/projects/${main.slug}/admin/features/${fid(shown, "e-case")}/similar`, main.secretKey);
    expect(foreign.status).toBe(404);
    const bad = await ctx.get(`/api/v3/projects/${main.slug}/admin/features/${fid(main, "e-case")}/similar?limit=21`, main.secretKey);
    expect(bad.status).toBe(422);
    expect((await parse<OwnerErrorAnswer>(bad)).error).toMatchObject({ code: "validation_failed", field: "limit" });
  });

  it("is refused with the embed key", async () => {
    const response = await ctx.get(`/api/v3/projects/${main.slug}/admin/features/${fid(main, "e-case")}/similar`, main.embedKey);
    expect(response.status).toBe(403);
  });
});

describe("findSimilarAdminFeatures (the owner rule for a feature id or a free text)", () => {
  async function projectRow(project: ImportedProject) {
    return ctx.db.selectFrom("projects").select(["id", "settings"]).where("slug", "=", project.slug).executeTakeFirstOrThrow();
  }

  it("ranks every feature, public or not, for a text; merged ones never", async () => {
    const found = new Map(scores(main, await findSimilarAdminFeatures(ctx.db, await projectRow(main), { q: "export to CSV" }, 20)));
    for (const ref of ["e-case", "e-pending", "e-denied", "e-archived"]) expect(found.get(ref), ref).toBe(1);
    expect(found.has("e-merged")).toBe(false);
  });

  it("lists the partial matches after the near-duplicates the owner sees, the merged one not counted", async () => {
    const project = await projectRow(main);
    const full = scores(main, await findSimilarAdminFeatures(ctx.db, project, { q: "Export to CSV" }, 20));
    const near = ["e-case", "e-typo", "e-plural", "e-reorder", "e-pending", "e-denied", "e-archived"];
    expect(
      full
        .slice(0, 7)
        .map(([ref]) => ref)
        .sort(),
    ).toEqual([...near].sort());
    expect(full[7]?.[0]).toBe("e-partial");
    for (const limit of [7, 8, 9]) {
      expect(scores(main, await findSimilarAdminFeatures(ctx.db, project, { q: "Export to CSV" }, limit))).toEqual(full.slice(0, limit));
    }
  });

  it("for a feature id answers what the owner route answers, and throws not_found for an unknown one", async () => {
    const project = await projectRow(main);
    const direct = await findSimilarAdminFeatures(ctx.db, project, { featureId: fid(main, "e-typo") }, 5, ctx.clock.now());
    const response = await ctx.get(`/api/v3/projects/${main.slug}/admin/features/${fid(main, "e-typo")}/similar`, main.secretKey);
    expect(direct).toEqual((await parse<AdminSimilar>(response)).data);
    await expect(findSimilarAdminFeatures(ctx.db, project, { featureId: 2147483647 }, 5)).rejects.toMatchObject({ code: "not_found" });
  });
});
