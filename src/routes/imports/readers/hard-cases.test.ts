/**
 * Generated hard cases of imports-v3.md ("How an import runs" rules 5 and 6, "Sources"): CSV
 * quoting, byte-order mark, bad dates, emoji, replies to replies, custom statuses, votes for
 * unknown posts and twice (kept for the writer), people without email, deleted users; files that
 * cannot be read fail with ImportFileError saying what and where; zip bombs are refused without
 * being inflated.
 */
import { strToU8, zipSync } from "fflate";
import { describe, expect, it } from "vitest";
import { ImportFileError } from "../import-data.ts";
import { mapSourceStatus } from "../status-map.ts";
import { parseEta, parseSourceDate } from "./dates.ts";
import { readImportFile } from "./index.ts";
import { readZipEntries, type ZipReadStats } from "./zip.ts";

const csv = (text: string) => strToU8(text);
const json = (value: unknown) => strToU8(JSON.stringify(value));

async function refusal(promise: Promise<unknown>): Promise<string> {
  const error = await promise.then(
    () => null,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(ImportFileError);
  return (error as Error).message;
}

describe("CSV source", () => {
  it("reads quoted cells with commas, quotes, newlines and emoji, after a byte-order mark, with lines as a person sees them", async () => {
    const file = csv(
      "\uFEFF Title ,Description,Status,Tags,Author Email,Author Name,Created At,Source ID\n" +
        '"Dark mode, please","She said ""yes""\nand then\nleft",In progress,"ui, theme",A@Example.com,Ann,2024-01-02 03:04:05,f1\n' +
        "\n" +
        '"🚀 Rockets",,Shipping soon,ui,,Bob,2024-01-02T03:04:05+02:00,f2\n' +
        ",no title,,,,,,f3\n" +
        "Bad date,,,,,,2024-02-30 00:00:00,f4\n" +
        "No id,,,,a@example.com,,,\n",
    );
    const data = await readImportFile({ source: "csv", file, fileName: "features.csv" });
    expect(data.features.map((f) => [f.sourceId, f.title, f.path, f.createdAt])).toEqual([
      ["f1", "Dark mode, please", "features.csv:2", "2024-01-02T03:04:05.000Z"],
      ["f2", "🚀 Rockets", "features.csv:6", "2024-01-02T01:04:05.000Z"],
      [null, "No id", "features.csv:9", null],
    ]);
    expect(data.features[0]!.description).toBe('She said "yes"\nand then\nleft');
    expect(data.features[0]!.tagSourceIds).toEqual(["ui", "theme"]);
    expect(data.warnings).toEqual([
      { path: "features.csv:7", message: "a row without title: skipped" },
      { path: "features.csv:8", message: expect.stringContaining('created_at "2024-02-30 00:00:00"') },
      { path: "features.csv:9", message: expect.stringContaining("no source_id") },
    ]);
    expect(data.skipped).toEqual({ features: 2 });
    // One person per email whatever its case; a name alone is a person too.
    expect(data.people.map((p) => [p.sourceId, p.name, p.email])).toEqual([
      ["email:a@example.com", "Ann", "A@Example.com"],
      ["name:Bob", "Bob", null],
    ]);
    expect(mapSourceStatus("csv", "In progress")).toEqual({ status: "in_progress", known: true });
    expect(mapSourceStatus("csv", "Shipping soon")).toEqual({ status: "open", known: false });
    expect(mapSourceStatus("csv", "Shipping soon", { "shipping soon": "planned" })).toEqual({ status: "planned", known: true });
  });

  it("ignores vote_count with one warning and reads votes and comments from a zip, keeping votes for unknown posts and twice", async () => {
    const file = zipSync({
      "export/features.csv": csv("title,vote_count,source_id\nA,5,a\nB,7,b\n"),
      "export/votes.csv": csv(
        "feature_source_id,voter_email,voter_name,created_at\na,x@example.com,X,\na,x@example.com,X,\nzzz,y@example.com,,\n,y@example.com,,\n",
      ),
      "export/comments.csv": csv(
        "feature_source_id,content,source_id,parent_source_id,author_name\na,top,c1,,X\na,reply,c2,c1,\na,reply to reply,c3,c2,\na,,c4,,\n",
      ),
    });
    const data = await readImportFile({ source: "csv", file, fileName: "export.zip" });
    expect(data.warnings.filter((w) => w.message.includes("vote_count"))).toHaveLength(1);
    expect(data.votes.map((v) => [v.featureSourceId, v.personSourceId])).toEqual([
      ["a", "email:x@example.com"],
      ["a", "email:x@example.com"],
      ["zzz", "email:y@example.com"],
    ]);
    expect(data.comments.map((c) => [c.sourceId, c.parentSourceId])).toEqual([
      ["c1", null],
      ["c2", "c1"],
      ["c3", "c2"],
    ]);
    expect(data.skipped).toEqual({ votes: 1, comments: 1 });
    expect(data.warnings).toContainEqual({ path: "votes.csv:5", message: "a row without feature_source_id: skipped" });
  });

  it("refuses a file without the title column, a zip without features.csv, and a file that is not CSV", async () => {
    expect(await refusal(readImportFile({ source: "csv", file: csv("name,status\nA,open\n"), fileName: "features.csv" }))).toBe(
      "features.csv: missing required column title",
    );
    expect(await refusal(readImportFile({ source: "csv", file: zipSync({ "votes.csv": csv("a\n") }), fileName: "x.zip" }))).toContain(
      "features.csv: missing",
    );
    expect(await refusal(readImportFile({ source: "csv", file: csv('title\n"open quote\n'), fileName: "features.csv" }))).toMatch(
      /^features\.csv:\d+: not CSV/,
    );
    expect(await refusal(readImportFile({ source: "csv", file: csv("title,b\nA\n"), fileName: "features.csv" }))).toMatch(
      /^features\.csv:2: not CSV/,
    );
  });
});

describe("Canny and Fider hard cases", () => {
  const user = (id: string, extra: Record<string, unknown> = {}) => ({
    id,
    name: null,
    email: null,
    isAdmin: false,
    userID: null,
    ...extra,
  });
  const post = (id: string, extra: Record<string, unknown> = {}) => ({
    id,
    title: `Post ${id}`,
    details: "",
    board: { id: "b1", name: "Board" },
    author: user("u1"),
    created: "2024-01-01T00:00:00.000Z",
    status: "shipping soon",
    tags: [],
    imageURLs: [],
    mergeHistory: [],
    eta: null,
    ...extra,
  });

  it("Canny: custom statuses, eta forms, v1 envelopes, people without email, private comments, a reply to a reply", async () => {
    const file = zipSync({
      "boards.json": json({ boards: [{ id: "b1", name: "Board" }] }),
      "posts.json": json({
        posts: [
          post("p1", { eta: "03/2025" }),
          post("p2", { eta: "2025-07-15" }),
          post("p3", { eta: "soon" }),
          post("p4", { created: "yesterday" }),
        ],
        hasMore: false,
      }),
      "users.json": json([user("u1", { name: "Nobody" })]),
      "comments.json": json({
        comments: [
          { id: "c1", post: { id: "p1" }, author: user("u2"), value: "top", parentID: null, created: "2024-01-01T00:00:00Z" },
          { id: "c2", post: { id: "p1" }, author: user("u1"), value: "reply", parentID: "c1", created: "2024-01-01T00:00:00Z" },
          { id: "c3", post: { id: "p1" }, author: null, value: "reply to reply", parentID: "c2", created: "2024-01-01T00:00:00Z" },
          { id: "c4", post: { id: "p1" }, author: user("u1"), value: "secret", private: true, created: "2024-01-01T00:00:00Z" },
        ],
        hasMore: false,
      }),
      "votes.json": json({ votes: [{ post: { id: "gone" }, voter: user("u3"), created: "2024-01-01T00:00:00Z" }], hasMore: false }),
    });
    const data = await readImportFile({ source: "canny", file, fileName: null });
    expect(data.features.map((f) => [f.sourceId, f.targetDate])).toEqual([
      ["p1", "2025-03-01"],
      ["p2", "2025-07-15"],
      ["p3", null],
    ]);
    expect(data.warnings).toContainEqual({ path: "posts.json[2]", message: expect.stringContaining('eta "soon"') });
    expect(data.warnings).toContainEqual({ path: "posts.json[3]", message: expect.stringContaining('created "yesterday" is not a date') });
    expect(mapSourceStatus("canny", "shipping soon")).toEqual({ status: "open", known: false });
    expect(data.comments.map((c) => [c.sourceId, c.parentSourceId, c.personSourceId])).toEqual([
      ["c1", null, "u2"],
      ["c2", "c1", "u1"],
      ["c3", "c2", null],
    ]);
    expect(data.skipped).toEqual({ features: 1, comments: 1 });
    expect(data.votes).toEqual([
      { featureSourceId: "gone", personSourceId: "u3", createdAt: "2024-01-01T00:00:00.000Z", path: "votes.json[0]" },
    ]);
    expect(data.people.map((p) => [p.sourceId, p.name, p.email])).toEqual([
      ["u1", "Nobody", null],
      ["u3", null, null],
      ["u2", null, null],
    ]);
  });

  it("Fider: a deleted user keeps no name or email; a deleted post is skipped with its votes; unapproved posts stay unapproved", async () => {
    const file = zipSync({
      "users.json": json([{ id: 7, name: "Gone", email: "gone@example.com", role: 1, status: 2, api_key: "k", security_stamp: "s" }]),
      "posts.json": json([
        { id: 1, title: "Held", status: 0, is_approved: false, created_at: "2024-01-01 10:00:00", user_id: 7, response: null },
        { id: 2, title: "Deleted", status: 6, is_approved: true, created_at: "2024-01-01T10:00:00Z", user_id: 7 },
        { id: 3, title: "Odd", status: 9, is_approved: true, created_at: "2024-01-01T10:00:00.123456Z", user_id: 7 },
      ]),
      "post_votes.json": json([{ post_id: 2, user_id: 7, created_at: "2024-01-01T10:00:00Z" }]),
      "comments.json": json([
        { id: 1, post_id: 1, user_id: 7, content: "held", is_approved: false, deleted_at: null, created_at: "2024-01-01T10:00:00Z" },
      ]),
    });
    const data = await readImportFile({ source: "fider", file, fileName: "backup.zip" });
    expect(data.people).toEqual([
      { sourceId: "7", ssoId: null, name: null, email: null, role: "voter", company: null, deleted: true, path: "users.json[0]" },
    ]);
    expect(data.features.map((f) => [f.sourceId, f.approved, f.status, f.createdAt])).toEqual([
      ["1", false, "open", "2024-01-01T10:00:00.000Z"],
      ["3", true, "unknown", "2024-01-01T10:00:00.123Z"],
    ]);
    expect(data.votes).toEqual([]);
    expect(data.skipped).toEqual({ features: 1, votes: 1, comments: 1 });
  });

  it("refuses what cannot be read, saying what and where", async () => {
    expect(await refusal(readImportFile({ source: "canny", file: csv("title\n"), fileName: "canny.zip" }))).toContain(
      "canny.zip: not a zip archive",
    );
    expect(
      await refusal(readImportFile({ source: "canny", file: zipSync({ "boards.json": json({ boards: [] }) }), fileName: "c.zip" })),
    ).toContain("posts.json: missing");
    expect(
      await refusal(
        readImportFile({
          source: "canny",
          file: zipSync({ "boards.json": json({ boards: [] }), "posts.json": csv("{oops") }),
          fileName: "c.zip",
        }),
      ),
    ).toMatch(/^posts\.json: not JSON/);
    expect(
      await refusal(readImportFile({ source: "fider", file: zipSync({ "posts.json": json({ rows: [] }) }), fileName: "backup.zip" })),
    ).toBe("posts.json: not a JSON array");
    expect(await refusal(readImportFile({ source: "fider", file: zipSync({ "users.json": json([]) }), fileName: "backup.zip" }))).toContain(
      "posts.json: missing",
    );
    expect(await refusal(readImportFile({ source: "fider", file: csv("number,name\n1,x\n"), fileName: "posts.csv" }))).toBe(
      "posts.csv: missing required column title",
    );
    const truncated = zipSync({ "boards.json": json({ boards: [] }), "posts.json": json({ posts: [] }) });
    expect(await refusal(readImportFile({ source: "canny", file: truncated.subarray(0, 60), fileName: "cut.zip" }))).toBe(
      "cut.zip: not a complete zip archive (no end record: truncated?)",
    );
  });

  it("refuses more records than the bound", async () => {
    const rows = Array.from({ length: 11 }, (_, i) => `T${i}`).join("\n");
    expect(
      await refusal(readImportFile({ source: "csv", file: csv(`title\n${rows}\n`), fileName: "features.csv" }, { maxRecords: 10 })),
    ).toContain("more than 10 records");
  });
});

describe("zip bounds (rule 6)", () => {
  const limits = { maxTotalBytes: 4 * 1024 * 1024, maxRatio: 100 };
  const zeros = (bytes: number) => zipSync({ "features.csv": new Uint8Array(bytes).fill(0x41) }, { level: 9 });

  /** Patches every header's uncompressed size of the (single-entry) zip to `size`. */
  function declare(zip: Uint8Array, size: number): Uint8Array {
    const out = zip.slice();
    const view = new DataView(out.buffer);
    for (let at = 0; at < out.length - 4; at += 1) {
      const signature = view.getUint32(at, true);
      if (signature === 0x04034b50) view.setUint32(at + 22, size, true);
      if (signature === 0x02014b50) view.setUint32(at + 24, size, true);
    }
    return out;
  }

  it("refuses an entry declaring over 100 times its compressed size before inflating any of it", () => {
    const stats: ZipReadStats = { inflatedBytes: 0 };
    expect(() => readZipEntries(zeros(3 * 1024 * 1024), "bomb.zip", new Set(["features.csv"]), limits, stats)).toThrow(
      "bomb.zip: features.csv would inflate over 100 times its compressed size (the bound of one entry)",
    );
    expect(stats.inflatedBytes).toBe(0);
  });

  it("refuses an entry whose header lies, having inflated no more than the bound and one step", () => {
    const honest = zeros(3 * 1024 * 1024);
    const stats: ZipReadStats = { inflatedBytes: 0 };
    expect(() => readZipEntries(declare(honest, 1000), "liar.zip", new Set(["features.csv"]), limits, stats)).toThrow(
      "liar.zip: features.csv inflates over 100 times its compressed size",
    );
    const compressed = honest.length;
    expect(stats.inflatedBytes).toBeLessThan(compressed * 100 + 1100 * 1024);
    expect(stats.inflatedBytes).toBeLessThan(3 * 1024 * 1024);
  });

  it("refuses an archive declaring over the total bound, at the default 500 MB too, without inflating", async () => {
    const stats: ZipReadStats = { inflatedBytes: 0 };
    const big = declare(zipSync({ "features.csv": new Uint8Array(8 * 1024 * 1024) }, { level: 0 }), 600 * 1024 * 1024);
    expect(await refusal(readImportFile({ source: "csv", file: big, fileName: "big.zip" }, { stats }))).toContain(
      "big.zip: over 500 MB uncompressed",
    );
    expect(stats.inflatedBytes).toBe(0);
  });

  it("stops inflating once the total bound is crossed by what is actually inflated", () => {
    const stats: ZipReadStats = { inflatedBytes: 0 };
    const archive = zipSync(
      { "features.csv": new Uint8Array(3 * 1024 * 1024).fill(1), "votes.csv": new Uint8Array(3 * 1024 * 1024).fill(2) },
      { level: 0 },
    );
    const lying = archive.slice();
    const view = new DataView(lying.buffer);
    for (let at = 0; at < lying.length - 4; at += 1) {
      if (view.getUint32(at, true) === 0x04034b50) view.setUint32(at + 22, 10, true);
    }
    expect(() => readZipEntries(lying, "two.zip", new Set(["features.csv", "votes.csv"]), limits, stats)).toThrow(
      "two.zip: over 4 MB uncompressed",
    );
    expect(stats.inflatedBytes).toBeLessThanOrEqual(limits.maxTotalBytes + 1024);
  });
});

describe("dates", () => {
  it("accepts RFC 3339 and YYYY-MM-DD HH:MM:SS (UTC) and nothing else", () => {
    expect(parseSourceDate("2024-01-22T08:50:40.19Z")).toBe("2024-01-22T08:50:40.190Z");
    expect(parseSourceDate("2024-01-22t08:50:40-05:30")).toBe("2024-01-22T14:20:40.000Z");
    expect(parseSourceDate("2024-01-22 08:50:40")).toBe("2024-01-22T08:50:40.000Z");
    for (const bad of ["2024-01-22", "22/01/2024", "2024-13-01 00:00:00", "2024-01-22T25:00:00Z", "2024-01-22T08:50:40", ""]) {
      expect(parseSourceDate(bad)).toBeNull();
    }
    expect(parseEta("13/2024")).toBeNull();
    expect(parseEta("2024-06-01T00:00:00.000Z")).toBe("2024-06-01");
  });
});
