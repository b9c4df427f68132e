/**
 * The sample exports (test/fixtures/imports/: real-shaped Canny list answers, a Fider backup and
 * Fider's posts.csv of one made-up board) read into the facts imports-v3.md ("Sources",
 * "Mapping") and import-formats.md name: counts per kind, Canny's merge of "Night theme please"
 * into "Dark mode", the reply's parent, the internal comment, the private tag, the deleted
 * comment, the inactive subscription and each source's statuses.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { zipSync } from "fflate";
import { describe, expect, it } from "vitest";
import { mapSourceStatus } from "../status-map.ts";
import { readImportFile } from "./index.ts";

const fixtures = join(import.meta.dirname, "../../../../test/fixtures/imports");

function zipFolder(folder: string, leave: string[] = []): Uint8Array {
  const files: Record<string, Uint8Array> = {};
  for (const name of readdirSync(join(fixtures, folder))) {
    if (!leave.includes(name)) files[name] = readFileSync(join(fixtures, folder, name));
  }
  return zipSync(files);
}

describe("Canny sample zip", async () => {
  const data = await readImportFile({ source: "canny", file: zipFolder("canny"), fileName: "canny.zip" });
  const feature = (title: string) => data.features.find((f) => f.title === title)!;

  it("reads every kind of record", () => {
    expect(data.source).toBe("canny");
    expect(data.boards.map((b) => b.name)).toEqual(["Feature Requests", "Bugs"]);
    // Three tags and the category "Mobile" (categories become tags).
    expect(data.tags.map((t) => t.name)).toEqual(["ui", "export", "enterprise", "Mobile"]);
    // Five posts and the merged post made from Dark mode's mergeHistory entry.
    expect(data.features).toHaveLength(6);
    expect(data.votes).toHaveLength(8);
    expect(data.comments).toHaveLength(5);
    expect(data.releases).toHaveLength(1);
    expect(data.subscriptions).toEqual([]);
    expect(data.people.map((p) => p.name)).toEqual(["Jon Snow", "Priya Sharma", "Marco Rossi", "Lena Fischer"]);
    expect(data.skipped).toEqual({ comments: 1 });
  });

  it("creates Night theme please from the merge entry, merged into Dark mode", () => {
    const dark = feature("Dark mode");
    const night = feature("Night theme please");
    expect(night).toMatchObject({
      sourceId: "65cd3a1ee4b0a1b2c3d4e706",
      description: "Could we get a night theme? My eyes hurt.",
      createdAt: "2024-02-14T21:47:58.713Z",
      boardSourceId: dark.boardSourceId,
      mergedIntoSourceId: dark.sourceId,
    });
    expect(dark.mergedIntoSourceId).toBeNull();
  });

  it("maps a post's fields: status as written, board, tags with the category, author, image on its own line", () => {
    expect(feature("Dark mode")).toMatchObject({
      status: "in progress",
      tagSourceIds: ["65a1f3a0e4b0a1b2c3d4e801"],
      authorSourceId: "65a50c6de4b0a1b2c3d4e002",
    });
    expect(feature("Offline mode for the mobile app").tagSourceIds).toEqual(["65bd2a11e4b0a1b2c3d4e900"]);
    const bug = feature("Editor loses cursor position after paste");
    expect(bug.boardSourceId).toBe("65a1f0d9e4b0a1b2c3d4e5f7");
    expect(bug.description).toBe(
      "Pasting text from Safari moves the cursor to the top of the note.\n\nhttps://canny.io/images/3b1f0c7a9e2d4f6b8a1c5e7d9f0b2a4c.png",
    );
    expect(data.features.map((f) => mapSourceStatus("canny", f.status).status)).toEqual([
      "in_progress",
      "planned",
      "open",
      "done",
      "open",
      "open",
    ]);
  });

  it("keeps the reply's parent and skips the internal comment with a warning", () => {
    const reply = data.comments.find((c) => c.sourceId === "65e59de3e4b0a1b2c3d4ea03")!;
    expect(reply.parentSourceId).toBe("65bdf1b2e4b0a1b2c3d4ea02");
    expect(reply.personSourceId).toBe("65a1ef11e4b0a1b2c3d4e001");
    expect(data.comments.some((c) => c.sourceId === "65d48f02e4b0a1b2c3d4ea05")).toBe(false);
    expect(data.warnings).toContainEqual({ path: "comments.json[4]", message: expect.stringContaining("internal") });
  });

  it("reads votes by voter (not the admin who cast it) and people with role, sso id and company", () => {
    const onBehalf = data.votes.find((v) => v.path === "votes.json[5]")!;
    expect(onBehalf).toEqual({
      featureSourceId: "65bd2830e4b0a1b2c3d4e703",
      personSourceId: "65bd270fe4b0a1b2c3d4e004",
      createdAt: "2024-02-02T17:35:12.701Z",
      path: "votes.json[5]",
    });
    const jon = data.people.find((p) => p.name === "Jon Snow")!;
    expect(jon).toMatchObject({ role: "editor", ssoId: null, email: "jon@acmenotes.io" });
    expect(data.people.find((p) => p.name === "Lena Fischer")).toMatchObject({
      role: "voter",
      ssoId: "c71d04e2",
      company: "Globex Corporation",
    });
  });

  it("reads the changelog entry as a release", () => {
    expect(data.releases[0]).toEqual({
      sourceId: "660a7b10e4b0a1b2c3d4ec01",
      name: "Keyboard shortcuts are here",
      body: "You can now use **Ctrl+B** and **Ctrl+I** in the editor.\n\nThanks to everyone who voted!",
      publishedAt: "2024-04-01T09:00:00.000Z",
      scheduledFor: null,
      changelogType: "new",
      featureSourceIds: ["65c75bf9e4b0a1b2c3d4e704"],
      path: "entries.json[0]",
    });
  });
});

describe("Fider sample backup", async () => {
  const data = await readImportFile({ source: "fider", file: zipFolder("fider-backup"), fileName: "backup.zip" });

  it("reads every kind of record", () => {
    expect(data.boards).toEqual([]);
    expect(data.features.every((f) => f.boardSourceId === null)).toBe(true);
    expect(data.people).toHaveLength(4);
    expect(data.tags.map((t) => [t.name, t.color])).toEqual([
      ["UI", "#1f77b4"],
      ["Export", "#2ca02c"],
    ]);
    expect(data.features).toHaveLength(6);
    expect(data.votes).toHaveLength(8);
    expect(data.comments).toHaveLength(5);
    expect(data.subscriptions).toHaveLength(5);
    expect(data.skipped).toEqual({ tags: 1, comments: 1 });
  });

  it("passes statuses as Fider's names; duplicate merges into the original, declined is a denial", () => {
    expect(data.features.map((f) => [f.sourceId, f.status, f.mergedIntoSourceId])).toEqual([
      ["1", "started", null],
      ["2", "planned", null],
      ["3", "open", null],
      ["4", "completed", null],
      ["5", null, "1"],
      ["6", "declined", null],
    ]);
    expect(data.features.map((f) => mapSourceStatus("fider", f.status).status)).toEqual([
      "in_progress",
      "planned",
      "open",
      "done",
      "open",
      "denied",
    ]);
    expect(data.features.find((f) => f.sourceId === "6")).toMatchObject({
      responseIsDenial: true,
      developerResponse: "This is not something we plan to support.",
    });
    expect(data.features.find((f) => f.sourceId === "5")!.developerResponse).toBeNull();
  });

  it("skips the private tag and drops its post tag", () => {
    expect(data.features.find((f) => f.sourceId === "2")!.tagSourceIds).toEqual(["2"]);
    expect(data.warnings).toContainEqual({ path: "tags.json[2]", message: expect.stringContaining("private tag") });
  });

  it("skips the deleted comment and marks the unsubscribed follower inactive", () => {
    expect(data.comments.map((c) => c.sourceId)).toEqual(["1", "2", "3", "4", "5"]);
    expect(data.warnings).toContainEqual({ path: "comments.json[5]", message: "a deleted comment: not imported" });
    expect(data.subscriptions.filter((s) => !s.active)).toEqual([
      { featureSourceId: "1", personSourceId: "4", active: false, path: "post_subscribers.json[2]" },
    ]);
  });

  it("maps roles and never keeps a credential", () => {
    expect(data.people.map((p) => [p.name, p.role])).toEqual([
      ["Jon Snow", "owner"],
      ["Priya Sharma", "voter"],
      ["Marco Rossi", "voter"],
      ["Lena Fischer", "editor"],
    ]);
    const everything = JSON.stringify(data);
    for (const secret of ["b3f1c2d4e5a6978812ab34cd56ef7890", "security_stamp", "api_key"]) expect(everything).not.toContain(secret);
  });
});

describe("Fider sample posts.csv", async () => {
  const data = await readImportFile({ source: "fider", file: readFileSync(join(fixtures, "fider-posts.csv")), fileName: "posts.csv" });

  it("reads features, responses and tags only, with one warning saying so", () => {
    expect(data.features.map((f) => [f.sourceId, f.status, f.tagSourceIds])).toEqual([
      ["number:6", "declined", []],
      ["number:4", "completed", ["ui"]],
      ["number:3", "open", []],
      ["number:2", "planned", ["export", "enterprise"]],
      ["number:1", "started", ["ui"]],
    ]);
    expect(data.votes).toEqual([]);
    expect(data.comments).toEqual([]);
    expect(data.warnings).toEqual([{ path: "posts.csv", message: expect.stringContaining("no people, votes or comments") }]);
    expect(data.people).toEqual([]);
    expect(data.features.every((f) => f.authorSourceId === null)).toBe(true);
    expect(data.features[0]).toMatchObject({
      responseIsDenial: true,
      developerResponse: "This is not something we plan to support.",
      createdAt: "2024-02-18T13:10:09.000Z",
    });
    expect(data.features[3]!.description).toBe(
      'I need to share notes with people who don\'t use Acme. A "Download as PDF" option per note would be enough.',
    );
  });
});
