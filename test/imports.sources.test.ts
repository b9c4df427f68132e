/**
 * Imports as an owner runs them (imports-v3.md), through the HTTP API only: POST /admin/imports
 * (multipart with the export, or Canny's JSON form), the job run to its end (as
 * test/imports.job.test.ts drives it), GET /admin/imports/{id}, then the board read back through
 * the public routes (features, comments, changelog, subscriptions) and the owner's voters and
 * events. One project per source; the expected counts are read off the exports themselves:
 * - Canny, a zip of test/fixtures/imports/canny/*.json, and the same lists from a fake Canny API
 *   (paging by skip/limit and by cursor, one 429 Retry-After): the same board, the key nowhere;
 * - Fider, the backup zip and posts.csv;
 * - CSV, a zip of the hard cases (quoting, BOM, bad dates, replies to replies, unknown votes,
 *   people matched by email), with a dry run, a second run and SSO claiming;
 * - bad files and the record bound.
 */
import { readdirSync, readFileSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { strToU8, zipSync } from "fflate";
import { SignJWT } from "jose";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runImportJob } from "../src/routes/imports/index.ts";
import { createTestContext, type ImportedProject, type Json, type TestContext } from "./support/harness.ts";

const FIXTURES = join(import.meta.dirname, "fixtures/imports");
const SSO_SECRET = "sso-secret-for-import-sources-0123456789";
const CANNY_KEY = "canny_secret_Zq8kX3vT9pL2mN7r";

/** One log line per entry, as the app's logger wrote it. */
const logLines: string[] = [];
let ctx: TestContext;
let canny: FakeCanny;

beforeAll(async () => {
  canny = await startFakeCanny(cannyLists());
  ctx = await createTestContext(
    {
      LOG_LEVEL: "debug",
      WEBHOOK_ALLOW_PRIVATE_URLS: "true",
      CANNY_API_URL: `${canny.url}/api`,
      IMPORT_LEASE_SECONDS: "2",
      IMPORT_POLL_INTERVAL_MS: "50",
    },
    { logDestination: { write: (line: string) => void logLines.push(line) } },
  );
});
afterAll(async () => {
  await ctx?.close();
  await canny?.close();
});

// ---------------------------------------------------------------------------------------------
// Driving an import through the API

const admin = (project: ImportedProject, path: string) => `/api/v3/projects/${project.slug}/admin${path}`;
const pub = (project: ImportedProject, path: string) => `/api/v3/projects/${project.slug}${path}`;

async function read(project: ImportedProject, path: string, headers: Record<string, string> = {}): Promise<Json> {
  const response = await ctx.get(path.startsWith("/api/") ? path : pub(project, path), project.secretKey, headers);
  const text = await response.text();
  expect(response.status, text).toBe(200);
  return JSON.parse(text);
}

/** POSTs the multipart form (`file` as a part named file) and answers the 202's ImportObject. */
async function upload(project: ImportedProject, fields: Record<string, string>, file: Uint8Array, fileName: string): Promise<Json> {
  const form = new FormData();
  for (const [name, value] of Object.entries(fields)) form.set(name, value);
  form.set("file", new Blob([new Uint8Array(file)]), fileName);
  const response = await ctx.app.request(admin(project, "/imports"), {
    method: "POST",
    headers: { "X-API-Key": project.secretKey },
    body: form,
  });
  const text = await response.text();
  expect(response.status, text).toBe(202);
  const created = JSON.parse(text).data;
  expect(created).toMatchObject({ status: "queued", dry_run: fields.dry_run === "true" });
  return created;
}

/** Runs import `id` to its end in this process (as a server's runner would) and reads it back. */
async function finish(project: ImportedProject, id: string): Promise<Json> {
  await runImportJob({ ...ctx.deps, liveProgress: new Map() }, id);
  const ended = (await read(project, admin(project, `/imports/${id}`))).data;
  expect(["succeeded", "failed"]).toContain(ended.status);
  return ended;
}

async function importFile(project: ImportedProject, fields: Record<string, string>, file: Uint8Array, fileName: string) {
  return finish(project, (await upload(project, fields, file, fileName)).id);
}

function expectSucceeded(job: Json): void {
  expect(job.status, JSON.stringify(job.error)).toBe("succeeded");
  expect(job.error).toBeNull();
}

const counts = (created: number, updated = 0, skipped = 0) => ({ created, updated, skipped });

/** Every feature the public routes list for the whole project (all statuses, approved only). */
async function allFeatures(project: ImportedProject, headers: Record<string, string> = {}): Promise<Json[]> {
  const statuses = ["open", "planned", "in_progress", "done", "denied", "archived"].map((s) => `status=${s}`).join("&");
  const list = await read(project, `/features?scope=project&sort=oldest&per_page=100&${statuses}`, headers);
  return list.data;
}

async function featureByHeading(project: ImportedProject, heading: string, headers: Record<string, string> = {}): Promise<Json> {
  const found = (await allFeatures(project, headers)).find((f) => f.heading === heading);
  expect(found, `feature ${heading}`).toBeDefined();
  return (await read(project, `/features/${found.id}`, headers)).data;
}

async function commentsOf(project: ImportedProject, featureId: string | number): Promise<Json[]> {
  return (await read(project, `/features/${featureId}/comments?per_page=100`)).data;
}

async function voters(project: ImportedProject): Promise<Json[]> {
  return (await read(project, admin(project, "/voters?per_page=100"))).data;
}

function ssoToken(sub: string, email: string | null, name = "Signed In"): Promise<string> {
  return new SignJWT(email === null ? { name } : { name, email })
    .setProtectedHeader({ alg: "HS256" })
    .setSubject(sub)
    .setIssuedAt()
    .setExpirationTime("10m")
    .sign(new TextEncoder().encode(SSO_SECRET));
}

/** Signs in through POST /identity with an SSO token; answers the headers that act as that voter. */
async function signIn(project: ImportedProject, sub: string, email: string | null, name?: string) {
  const token = await ssoToken(sub, email, name);
  const response = await ctx.send("POST", pub(project, "/identity"), project.secretKey, undefined, { "X-VF-Token": token });
  expect([200, 201], await response.clone().text()).toContain(response.status);
  return { headers: { "X-VF-Token": token }, status: response.status };
}

async function projectIdOf(project: ImportedProject): Promise<number> {
  return (await ctx.db.selectFrom("projects").select("id").where("slug", "=", project.slug).executeTakeFirstOrThrow()).id;
}

/** The project's votes table per feature id: count and sum of weights. */
async function votesTable(project: ImportedProject): Promise<Map<number, { count: number; weight: number }>> {
  const rows = await sql<{ feature_id: number; n: number; w: number }>`SELECT feature_id, count(*)::int AS n, sum(weight)::float8 AS w
    FROM votes WHERE project_id = ${await projectIdOf(project)} GROUP BY feature_id`.execute(ctx.db);
  return new Map(rows.rows.map((r) => [r.feature_id, { count: r.n, weight: r.w }]));
}

/** Every listed feature's vote_count and score equal what the votes table holds. */
async function expectCountersFromVotes(project: ImportedProject): Promise<void> {
  const table = await votesTable(project);
  for (const feature of await allFeatures(project)) {
    const row = table.get(Number(feature.id)) ?? { count: 0, weight: 0 };
    expect({ heading: feature.heading, votes: feature.vote_count, score: feature.score }).toEqual({
      heading: feature.heading,
      votes: row.count,
      score: row.weight,
    });
  }
}

const tagNames = (feature: Json) => feature.tags.map((t: Json) => t.name).sort();

// ---------------------------------------------------------------------------------------------
// Canny: the fixtures, as a zip and as a fake API

/** The fixtures' list answers by file name. */
function cannyLists(): Record<string, Json> {
  const lists: Record<string, Json> = {};
  for (const name of readdirSync(join(FIXTURES, "canny"))) {
    lists[name] = JSON.parse(readFileSync(join(FIXTURES, "canny", name), "utf8"));
  }
  // Two votes for "Night theme please" (merged into "Dark mode", absent from posts.json), so that
  // the merge has votes to move: Priya voted for Dark mode too (counted once), Jon did not.
  const night = { id: "65cd3a1ee4b0a1b2c3d4e706", title: "Night theme please" };
  const voter = (id: string) => lists["users.json"].users.find((u: Json) => u.id === id);
  lists["votes.json"].votes.push(
    { id: "65cd3a1ee4b0a1b2c3d4eb09", created: "2024-02-14T21:48:00.000Z", post: night, voter: voter("65a50c6de4b0a1b2c3d4e002") },
    { id: "65cd3a1ee4b0a1b2c3d4eb10", created: "2024-02-14T22:00:00.000Z", post: night, voter: voter("65a1ef11e4b0a1b2c3d4e001") },
  );
  return lists;
}

function cannyZip(): Uint8Array {
  return zipSync(Object.fromEntries(Object.entries(cannyLists()).map(([name, answer]) => [name, strToU8(JSON.stringify(answer))])));
}

interface FakeCanny {
  url: string;
  /** Requests received: endpoint and body (the apiKey taken out and checked). */
  requests: Array<{ endpoint: string; body: Json }>;
  close(): Promise<void>;
}

/**
 * Canny's API on 127.0.0.1 (import-formats.md §2): POST with a JSON body carrying `apiKey`; v1
 * lists paged by `skip`/`limit` (`hasMore`), pages of at most 3 whatever the limit asked; v2
 * comments and users paged by `cursor` (`hasNextPage`), 2 a page; the first posts request
 * answered 429 with Retry-After: 1; a wrong key 401.
 */
async function startFakeCanny(lists: Record<string, Json>): Promise<FakeCanny> {
  const requests: FakeCanny["requests"] = [];
  const v1: Record<string, [string, string]> = {
    "/api/v1/boards/list": ["boards.json", "boards"],
    "/api/v1/categories/list": ["categories.json", "categories"],
    "/api/v1/tags/list": ["tags.json", "tags"],
    "/api/v1/posts/list": ["posts.json", "posts"],
    "/api/v1/votes/list": ["votes.json", "votes"],
    "/api/v1/entries/list": ["entries.json", "entries"],
    "/api/v1/companies/list": ["companies.json", "companies"],
  };
  const v2: Record<string, [string, string]> = {
    "/api/v2/comments/list": ["comments.json", "items"],
    "/api/v2/users/list": ["users.json", "users"],
  };
  let limited = false;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const answer = (status: number, body: unknown, headers: Record<string, string> = {}) => {
        res.writeHead(status, { "content-type": "application/json", ...headers });
        res.end(JSON.stringify(body));
      };
      const path = req.url ?? "";
      let body: Json;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString("utf8"));
      } catch {
        return answer(400, { error: "not JSON" });
      }
      const { apiKey, ...rest } = body;
      requests.push({ endpoint: path, body: rest });
      if (req.method !== "POST") return answer(405, { error: "POST only" });
      if (apiKey !== CANNY_KEY) return answer(401, { error: "invalid api key" });
      if (path === "/api/v1/posts/list" && !limited) {
        limited = true;
        return answer(429, { error: "slow down" }, { "Retry-After": "1" });
      }
      if (path === "/api/v1/boards/list") return answer(200, { boards: lists["boards.json"].boards });
      const one = v1[path];
      if (one) {
        const all: unknown[] = lists[one[0]][one[1]];
        const skip = Number(rest.skip ?? 0);
        const size = Math.min(Number(rest.limit ?? 10), 3);
        return answer(200, { [one[1]]: all.slice(skip, skip + size), hasMore: skip + size < all.length });
      }
      const two = v2[path];
      if (two) {
        const all: unknown[] = lists[two[0]][two[1]];
        const start = rest.cursor ? Number(String(rest.cursor).replace("page-", "")) : 0;
        const end = start + 2;
        return answer(200, {
          [two[1]]: all.slice(start, end),
          cursor: end < all.length ? `page-${end}` : null,
          hasNextPage: end < all.length,
        });
      }
      return answer(404, { error: `no ${path}` });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** A fresh project with SSO sign-in, and Priya's SSO voter (Canny userID 8f3c2a91) made first. */
async function cannyProject() {
  const project = await ctx.importProject({ project: { sso_secret: SSO_SECRET } });
  const priya = await signIn(project, "8f3c2a91", "priya.sharma@work.example", "Priya (SSO)");
  expect(priya.status).toBe(201);
  return { project, priya };
}

const DARK = "Dark mode";
const NIGHT = "Night theme please";

/** Everything the Canny fixtures (plus the two votes of cannyLists) make on a fresh project. */
async function expectCannyBoard(project: ImportedProject, job: Json, priyaHeaders: Record<string, string>) {
  expectSucceeded(job);
  // The ImportObject's own order (imports-v3.md), also once the counts come back from storage.
  expect(Object.keys(job.counts)).toEqual([
    "boards",
    "tags",
    "voters",
    "features",
    "votes",
    "comments",
    "releases",
    "merges",
    "subscriptions",
  ]);
  expect(Object.keys(job.counts.features)).toEqual(["created", "updated", "skipped"]);
  expect(job.counts).toEqual({
    boards: counts(0), // roadmap mode: the two boards become tags
    tags: counts(6), // ui, export, enterprise, the category Mobile, boards Feature Requests and Bugs
    voters: counts(3, 1), // Jon, Marco, Lena made; Priya matched by her userID (the SSO voter made first)
    features: counts(6), // five posts and the merged post of Dark mode's mergeHistory
    votes: counts(10), // eight in votes.json and two for Night theme
    comments: counts(5, 0, 1), // six, the internal one skipped
    releases: counts(1),
    merges: counts(1),
    // Pairs (feature, voter) from authors, votes and comments: Dark mode 4, Export 2, Offline 1,
    // Keyboard 1, Editor 2, Night theme 2.
    subscriptions: counts(12),
  });
  expect(job.warning_count).toBe(job.warnings.length);
  expect(job.warnings).toContainEqual({ path: "comments.json[4]", message: expect.stringMatching(/internal/) });
  expect(job.progress.done).toBe(job.progress.total);

  const features = await allFeatures(project);
  const byHeading = Object.fromEntries(features.map((f) => [f.heading, f]));
  // Statuses: imports-v3.md "Sources", Canny.
  expect({
    dark: byHeading[DARK]?.status,
    export: byHeading["Export notes to PDF"]?.status,
    offline: byHeading["Offline mode for the mobile app"]?.status,
    keyboard: byHeading["Keyboard shortcuts for formatting"]?.status,
    editor: byHeading["Editor loses cursor position after paste"]?.status,
  }).toEqual({ dark: "in_progress", export: "planned", offline: "open", keyboard: "done", editor: "open" });

  // Night theme merged into Dark mode: archived, its votes moved; Priya's (on both) counted once.
  const admin = (await read(project, `/api/v3/projects/${project.slug}/admin/features?per_page=100&status=archived`)).data;
  const night = admin.find((f: Json) => f.heading === NIGHT);
  expect(night, "the merged post is a feature").toBeDefined();
  expect(night.status).toBe("archived");
  const dark = await featureByHeading(project, DARK);
  expect(dark.vote_count).toBe(4); // Priya, Marco, Lena, and Jon's vote moved from Night theme
  expect(dark.score).toBe(4);
  const darkVoters = await sql<{ voter_id: number }>`SELECT voter_id FROM votes WHERE feature_id = ${Number(dark.id)}`.execute(ctx.db);
  expect(new Set(darkVoters.rows.map((r) => r.voter_id)).size).toBe(4);
  expect(await votesTable(project).then((t) => t.get(Number(night.id))?.count ?? 0)).toBe(0);
  expect(tagNames(dark)).toEqual(["Feature Requests", "ui"]);
  expect(tagNames(byHeading["Offline mode for the mobile app"])).toEqual(["Feature Requests", "Mobile"]);
  expect(tagNames(byHeading["Editor loses cursor position after paste"])).toEqual(["Bugs"]);
  expect(byHeading["Editor loses cursor position after paste"].description).toContain(
    "\nhttps://canny.io/images/3b1f0c7a9e2d4f6b8a1c5e7d9f0b2a4c.png",
  );
  // Priya's votes landed on her SSO voter.
  expect(dark.has_voted).toBe(false);
  expect((await featureByHeading(project, DARK, priyaHeaders)).has_voted).toBe(true);
  expect((await featureByHeading(project, "Export notes to PDF", priyaHeaders)).has_voted).toBe(true);

  // The reply hangs under its parent; the internal comment is nowhere.
  const darkComments = await commentsOf(project, dark.id);
  expect(darkComments.map((c) => c.content.slice(0, 20))).toEqual(expect.arrayContaining(["Yes please! Especial", "Would it follow the "]));
  expect(darkComments).toHaveLength(2);
  const parent = darkComments.find((c) => c.content.startsWith("Would it follow"));
  expect(parent.replies).toHaveLength(1);
  expect(parent.replies[0]).toMatchObject({ parent_id: parent.id, author_name: "Jon Snow" });
  expect(parent.replies[0].content).toMatch(/^Yes, that's the plan/);
  expect(dark.comment_count).toBe(3);
  const exportComments = await commentsOf(project, byHeading["Export notes to PDF"].id);
  expect(exportComments.map((c) => c.content)).toEqual(["A Markdown export would also be great."]);
  expect(JSON.stringify(exportComments)).not.toContain("Globex asked");

  // The changelog entry, with its post linked.
  const changelog = (await read(project, "/changelog")).data;
  expect(changelog).toHaveLength(1);
  expect(changelog[0]).toMatchObject({ name: "Keyboard shortcuts are here", published_at: "2024-04-01T09:00:00.000Z" });
  expect(changelog[0].body_html).toContain("<strong>Ctrl+B</strong>");
  expect(changelog[0].features.map((f: Json) => f.heading)).toEqual(["Keyboard shortcuts for formatting"]);

  // Voters: a company, the admin an editor, Priya's SSO voter kept.
  const list = await voters(project);
  const named = (name: string) => list.find((v) => v.display_name === name);
  expect(named("Lena Fischer")).toMatchObject({ company: "Globex Corporation", sso_id: "c71d04e2", email: "lena@example.net" });
  expect(named("Jon Snow")).toMatchObject({ role: "editor", email: "jon@acmenotes.io" });
  expect(named("Priya (SSO)")).toMatchObject({ sso_id: "8f3c2a91" });
  expect(list.filter((v) => v.sso_id === "8f3c2a91")).toHaveLength(1);
  expect(list).toHaveLength(4);
  await expectCountersFromVotes(project);
}

/** A comparable view of the public board (ids differ between projects). */
async function boardView(project: ImportedProject) {
  const features = await allFeatures(project);
  const view = [];
  for (const f of features) {
    const comments = await commentsOf(project, f.id);
    view.push({
      heading: f.heading,
      status: f.status,
      votes: f.vote_count,
      score: f.score,
      comments: f.comment_count,
      tags: tagNames(f),
      description: f.description,
      created_at: f.created_at,
      thread: comments.map((c) => [c.content, c.author_name, c.replies.map((r: Json) => r.content)]),
    });
  }
  const changelog = (await read(project, "/changelog")).data.map((r: Json) => [r.name, r.features.map((f: Json) => f.heading)]);
  return { view, changelog };
}

describe("Canny", () => {
  let zipBoard: Awaited<ReturnType<typeof boardView>>;

  it("a zip of the list answers makes the board the export describes", async () => {
    const { project, priya } = await cannyProject();
    const job = await importFile(project, { source: "canny" }, cannyZip(), "canny-export.zip");
    await expectCannyBoard(project, job, priya.headers);
    zipBoard = await boardView(project);
  });

  it("Canny's API (paged, one 429) makes the same board; the key is stored and logged nowhere", async () => {
    const { project, priya } = await cannyProject();
    const linesBefore = logLines.length;
    canny.requests.length = 0;
    const response = await ctx.send("POST", admin(project, "/imports"), project.secretKey, { source: "canny", api_key: CANNY_KEY });
    const text = await response.text();
    expect(response.status, text).toBe(202);
    expect(text).not.toContain(CANNY_KEY);
    const job = await finish(project, JSON.parse(text).data.id);
    await expectCannyBoard(project, job, priya.headers);
    expect(await boardView(project)).toEqual(zipBoard);

    // Paged as the API pages: skip/limit, cursors, and the 429 asked again.
    const posts = canny.requests.filter((r) => r.endpoint === "/api/v1/posts/list");
    expect(posts.map((r) => r.body.skip)).toEqual([0, 0, 3]);
    const votes = canny.requests.filter((r) => r.endpoint === "/api/v1/votes/list");
    expect(votes.map((r) => r.body.skip)).toEqual([0, 3, 6, 9]);
    const comments = canny.requests.filter((r) => r.endpoint === "/api/v2/comments/list");
    expect(comments.map((r) => r.body.cursor ?? null)).toEqual([null, "page-2", "page-4"]);

    // The key: in no row of imports, import_files or events, and in no log line.
    const like = `%${CANNY_KEY}%`;
    const found = await sql<{ n: number }>`SELECT
        (SELECT count(*) FROM imports i WHERE i::text LIKE ${like})
      + (SELECT count(*) FROM import_files f WHERE f::text LIKE ${like} OR position(convert_to(${CANNY_KEY}, 'UTF8') IN f.bytes) > 0)
      + (SELECT count(*) FROM events e WHERE e::text LIKE ${like}) AS n`.execute(ctx.db);
    expect(Number(found.rows[0]?.n)).toBe(0);
    const lines = logLines.slice(linesBefore);
    expect(lines.some((line) => line.includes("/admin/imports"))).toBe(true);
    expect(lines.filter((line) => line.includes(CANNY_KEY))).toEqual([]);
  });

  it("a wrong key fails the import naming api_key, and the key is not in the error", async () => {
    const { project } = await cannyProject();
    const response = await ctx.send("POST", admin(project, "/imports"), project.secretKey, {
      source: "canny",
      api_key: "wrong_key_123456",
    });
    expect(response.status).toBe(202);
    const job = await finish(project, (await response.json()).data.id);
    expect(job).toMatchObject({ status: "failed", error: { code: "validation_failed", field: "api_key" } });
    expect(JSON.stringify(job)).not.toContain("wrong_key_123456");
    expect(await allFeatures(project)).toEqual([]);
  });
});

// ---------------------------------------------------------------------------------------------
// Fider

function fiderBackupZip(): Uint8Array {
  const dir = join(FIXTURES, "fider-backup");
  return zipSync(Object.fromEntries(readdirSync(dir).map((name) => [name, new Uint8Array(readFileSync(join(dir, name)))])));
}

describe("Fider", () => {
  it("the backup zip: statuses, the duplicate merged, private tag and deleted comment left out, opt-outs kept, roles", async () => {
    const project = await ctx.importProject({ project: { sso_secret: SSO_SECRET } });
    const job = await importFile(project, { source: "fider" }, fiderBackupZip(), "backup.zip");
    expectSucceeded(job);
    expect(job.counts).toEqual({
      boards: counts(0),
      tags: counts(2, 0, 1), // UI and Export; Enterprise is private
      voters: counts(4),
      features: counts(6),
      votes: counts(8),
      comments: counts(5, 0, 1), // comment 6 was deleted
      releases: counts(0),
      merges: counts(1), // Night theme please (status 5) into Dark mode
      // Followers: Priya and Marco on 1, Marco on 2, Lena on 3 (post_subscribers), then authors,
      // voters and commenters: Priya on 2 and 4, Marco on 5, Lena on 6, Jon on 1; and Lena's
      // opt-out of 1, kept as its row (so her vote and comment there do not subscribe her).
      subscriptions: counts(10),
    });
    const features = await allFeatures(project);
    const by = Object.fromEntries(features.map((f) => [f.heading, f]));
    expect({
      dark: by[DARK]?.status,
      export: by["Export notes to PDF"]?.status,
      offline: by["Offline mode for the mobile app"]?.status,
      keyboard: by["Keyboard shortcuts for formatting"]?.status,
      sync: by["Sync with MySpace"]?.status,
    }).toEqual({ dark: "in_progress", export: "planned", offline: "open", keyboard: "done", sync: "denied" });
    expect(by["Sync with MySpace"]).toMatchObject({
      developer_response: "This is not something we plan to support.",
      response_is_denial: true,
    });
    expect(by[DARK]).toMatchObject({ response_is_denial: false });
    // Marco voted for Night theme and Dark mode: counted once after the merge.
    expect(by[DARK].vote_count).toBe(3);
    const archived = (await read(project, admin(project, "/features?per_page=100&status=archived"))).data;
    expect(archived.map((f: Json) => f.heading)).toEqual([NIGHT]);
    // The private tag is on no feature, and not a tag of the project.
    expect(features.flatMap(tagNames)).not.toContain("Enterprise");
    expect(tagNames(by["Export notes to PDF"])).toEqual(["Export"]);
    const tags = (await read(project, admin(project, "/tags"))).data;
    expect(tags.map((t: Json) => t.name).sort()).toEqual(["Export", "UI"]);
    // The deleted comment is absent.
    expect(await commentsOf(project, by["Offline mode for the mobile app"].id)).toEqual([]);
    expect(by[DARK].comment_count).toBe(3);
    // Roles: the administrator owner, the collaborator editor.
    const list = await voters(project);
    expect(list.find((v) => v.display_name === "Jon Snow")).toMatchObject({ role: "owner" });
    expect(list.find((v) => v.display_name === "Lena Fischer")).toMatchObject({ role: "editor" });
    expect(list.find((v) => v.display_name === "Priya Sharma")).toMatchObject({ role: null });
    // Subscriptions as the voters see them (claimed through SSO by their emails).
    const followed = async (sub: string, email: string) => {
      const { headers } = await signIn(project, sub, email);
      return (await read(project, "/subscriptions?per_page=100", headers)).data.map((s: Json) => s.feature.heading).sort();
    };
    expect(await followed("lena-sub", "LENA@example.net")).toEqual(["Offline mode for the mobile app", "Sync with MySpace"]);
    expect(await followed("priya-sub", "priya@example.com")).toEqual([DARK, "Export notes to PDF", "Keyboard shortcuts for formatting"]);
    // Marco suggested Night theme: he still sees it, and the merge subscribed him to Dark mode too.
    expect(await followed("marco-sub", "marco@example.org")).toEqual([DARK, "Export notes to PDF", NIGHT]);
    expect(await followed("jon-sub", "jon@acmenotes.io")).toEqual([DARK]);
    await expectCountersFromVotes(project);
  });

  it("posts.csv: features, responses and tags only, with a warning saying why", async () => {
    const project = await ctx.importProject();
    const job = await importFile(project, { source: "fider" }, readFileSync(join(FIXTURES, "fider-posts.csv")), "posts.csv");
    expectSucceeded(job);
    expect(job.counts).toMatchObject({
      tags: counts(3), // ui, export, enterprise (slugs)
      voters: counts(0),
      features: counts(5),
      votes: counts(0),
      comments: counts(0),
      merges: counts(0),
      subscriptions: counts(0),
    });
    expect(job.warnings).toContainEqual({ path: "posts.csv", message: expect.stringMatching(/no people, votes or comments/) });
    expect(await voters(project)).toEqual([]);
    const features = await allFeatures(project);
    expect(features.map((f) => [f.heading, f.status, f.vote_count, f.comment_count]).sort()).toEqual(
      [
        [DARK, "in_progress", 0, 0],
        ["Export notes to PDF", "planned", 0, 0],
        ["Keyboard shortcuts for formatting", "done", 0, 0],
        ["Offline mode for the mobile app", "open", 0, 0],
        ["Sync with MySpace", "denied", 0, 0],
      ].sort(),
    );
    const sync = features.find((f) => f.heading === "Sync with MySpace");
    expect(sync).toMatchObject({ developer_response: "This is not something we plan to support.", response_is_denial: true });
    expect(tagNames(features.find((f) => f.heading === "Export notes to PDF"))).toEqual(["enterprise", "export"]);
    expect(features.find((f) => f.heading === "Export notes to PDF").description).toBe(
      'I need to share notes with people who don\'t use Acme. A "Download as PDF" option per note would be enough.',
    );
  });
});

// ---------------------------------------------------------------------------------------------
// CSV

const BOM = "\uFEFF";
const FEATURES_CSV = `${BOM}title,description,status,board,tags,author_name,author_email,created_at,developer_response,source_id
"Export, with commas","He said ""hi""
and left",In progress,Web,"ui, export",Ann,ann@example.com,2024-01-02 03:04:05,,f1
🚀 Rocket launch 🎉,plain,Shipped,Mobile,ui,,,2024-01-03T00:00:00Z,Thanks,f2
Bad date row,x,open,,,,,2024-13-45 00:00:00,,f3
Needs triage row,x,Needs triage,,,,,,,f4
Icebox row,x,Icebox,,,,,,,f5
`;
const VOTES_CSV = `feature_source_id,voter_email,voter_name,created_at
f1,ann@example.com,Ann,2024-01-05T00:00:00Z
f1,ANN@example.com,Ann,2024-01-06T00:00:00Z
f2,existing@example.com,,
nope,bob@example.com,Bob,
f1,bob@example.com,Bob,
`;
const COMMENTS_CSV = `feature_source_id,content,source_id,parent_source_id,author_email,author_name,created_at
f1,"Top, level",c1,,ann@example.com,Ann,2024-02-01 00:00:00
f1,Reply one,c2,c1,,Zed,
f1,Reply to reply,c3,c2,bob@example.com,Bob,
`;

function csvZip(): Uint8Array {
  return zipSync({
    "features.csv": strToU8(FEATURES_CSV),
    "votes.csv": strToU8(VOTES_CSV),
    "comments.csv": strToU8(COMMENTS_CSV),
  });
}

const CSV_FIELDS = { source: "csv", boards: "custom", status_map: JSON.stringify({ Icebox: "planned" }) };

async function typedEvents(project: ImportedProject): Promise<Json[]> {
  const events: Json[] = [];
  for (let page = 1; ; page += 1) {
    const list = await read(project, admin(project, `/events?per_page=100&page=${page}`));
    events.push(...list.data);
    if (list.data.length < 100) return events;
  }
}

describe("CSV", () => {
  it("hard cases; a dry run, the real run and a second run; one event per real run, no notification or email", async () => {
    const project = await ctx.importProject({ project: { sso_secret: SSO_SECRET } });
    // A voter that exists before the import, matched by email (case differs).
    const existing = await signIn(project, "ext-1", "Existing@Example.com", "Existing");
    expect(existing.status).toBe(201);
    const boardBefore = await allFeatures(project);
    const eventsBefore = await typedEvents(project);

    const dry = await importFile(project, { ...CSV_FIELDS, dry_run: "true" }, csvZip(), "export.zip");
    expectSucceeded(dry);
    expect(await allFeatures(project)).toEqual(boardBefore);
    expect(await typedEvents(project)).toEqual(eventsBefore);

    const job = await importFile(project, CSV_FIELDS, csvZip(), "export.zip");
    expectSucceeded(job);
    const expected = {
      boards: counts(2), // Web, Mobile
      tags: counts(2), // ui, export
      voters: counts(3, 1), // Ann, Zed (no email), Bob; Existing matched by email
      features: counts(4, 0, 1), // f3's date does not parse
      votes: counts(3, 0, 2), // Ann's second vote and the vote for "nope"
      comments: counts(3),
      releases: counts(0),
      merges: counts(0),
      subscriptions: counts(4), // Ann on f1 (author), Existing on f2, Bob and Zed on f1
    };
    expect(job.counts).toEqual(expected);
    expect(dry.counts).toEqual(job.counts);
    expect(dry.warnings).toEqual(job.warnings);
    expect(job.warnings).toContainEqual({ path: "features.csv:5", message: expect.stringMatching(/created_at/) });
    expect(job.warnings).toContainEqual({ path: "features.csv:6", message: expect.stringMatching(/unknown status "Needs triage"/) });
    expect(job.warnings).toContainEqual({ path: "votes.csv:5", message: expect.stringMatching(/unknown post "nope"/) });

    const web = (await read(project, "/features?board=web&per_page=100&sort=oldest")).data;
    const mobile = (await read(project, "/features?board=mobile&per_page=100&sort=oldest")).data;
    expect(web.map((f: Json) => f.heading)).toEqual(["Export, with commas"]);
    expect(mobile.map((f: Json) => f.heading)).toEqual(["🚀 Rocket launch 🎉"]);
    const f1 = (await read(project, `/features/${web[0].id}`)).data;
    expect(f1).toMatchObject({ description: 'He said "hi"\nand left', status: "in_progress", created_at: "2024-01-02T03:04:05.000Z" });
    expect(f1.vote_count).toBe(2);
    expect(tagNames(f1)).toEqual(["export", "ui"]);
    expect(mobile[0]).toMatchObject({ status: "done", developer_response: "Thanks", vote_count: 1 });
    const features = await allFeatures(project);
    expect(features.find((f) => f.heading === "Needs triage row")?.status).toBe("open");
    expect(features.find((f) => f.heading === "Icebox row")?.status).toBe("planned");
    expect(features.find((f) => f.heading === "Bad date row")).toBeUndefined();
    // The existing voter's vote landed on them.
    expect((await read(project, `/features/${mobile[0].id}`, existing.headers)).data.has_voted).toBe(true);
    // A reply to a reply hangs under the top-level comment.
    const thread = await commentsOf(project, f1.id);
    expect(thread).toHaveLength(1);
    expect(thread[0]).toMatchObject({ content: "Top, level", author_name: "Ann" });
    expect(thread[0].replies.map((r: Json) => [r.content, r.author_name, r.parent_id])).toEqual([
      ["Reply one", "Zed", thread[0].id],
      ["Reply to reply", "Bob", thread[0].id],
    ]);
    const zed = (await voters(project)).find((v) => v.display_name === "Zed");
    expect(zed).toMatchObject({ email: null, kind: "sso" });
    await expectCountersFromVotes(project);

    // One import.completed for the real run, no other event.
    const afterFirst = await typedEvents(project);
    const added = afterFirst.filter((e) => !eventsBefore.some((b) => b.id === e.id));
    expect(added.map((e) => [e.type, e.data.object.id])).toEqual([["import.completed", job.id]]);

    // Again: nothing created, the board the same.
    const boardAfter = await read(project, "/features?scope=project&per_page=100&sort=oldest");
    const again = await importFile(project, CSV_FIELDS, csvZip(), "export.zip");
    expectSucceeded(again);
    for (const [kind, count] of Object.entries(again.counts as Record<string, { created: number }>)) {
      expect(count.created, kind).toBe(0);
    }
    expect(again.counts.features).toEqual(counts(0, 4, 1));
    expect(await read(project, "/features?scope=project&per_page=100&sort=oldest")).toEqual(boardAfter);
    const afterSecond = await typedEvents(project);
    const addedSecond = afterSecond.filter((e) => !afterFirst.some((b) => b.id === e.id));
    expect(addedSecond.map((e) => [e.type, e.data.object.id])).toEqual([["import.completed", again.id]]);

    // Quiet: nothing for the outbox's consumers to send.
    const projectId = await projectIdOf(project);
    const notifications = await ctx.db.selectFrom("notifications").select("id").where("project_id", "=", projectId).execute();
    const emails = await ctx.db.selectFrom("emails").select("id").where("project_id", "=", projectId).execute();
    expect({ notifications: notifications.length, emails: emails.length }).toEqual({ notifications: 0, emails: 0 });

    // Claiming: Ann's email in another case takes Ann's voter, her votes with it.
    const ann = await signIn(project, "ann-sub", "ANN@Example.COM");
    expect(ann.status).toBe(200);
    expect((await read(project, `/features/${f1.id}`, ann.headers)).data.has_voted).toBe(true);
    expect((await read(project, `/features/${mobile[0].id}`, ann.headers)).data.has_voted).toBe(false);
  });
});

// ---------------------------------------------------------------------------------------------
// Files that cannot be read

describe("bad files", () => {
  async function expectFileFailure(fields: Record<string, string>, file: Uint8Array, name: string, message: RegExp) {
    const project = await ctx.importProject();
    const before = await allFeatures(project);
    const job = await importFile(project, fields, file, name);
    expect(job).toMatchObject({ status: "failed", error: { code: "validation_failed", field: "file" } });
    expect(job.error.message).toMatch(message);
    expect(job.counts.features).toEqual(counts(0));
    expect(await allFeatures(project)).toEqual(before);
    const rows = await ctx.db
      .selectFrom("voters")
      .select("id")
      .where("project_id", "=", await projectIdOf(project))
      .execute();
    expect(rows).toEqual([]);
    const events = await typedEvents(project);
    expect(events.map((e) => [e.type, e.data.object.status])).toEqual([["import.completed", "failed"]]);
  }

  it("Canny that is not a zip", async () => {
    await expectFileFailure({ source: "canny" }, strToU8('{"posts": []}'), "posts.json", /not a zip/);
  });

  it("a features.csv without a title column", async () => {
    await expectFileFailure({ source: "csv" }, strToU8("heading,author_email\nDark mode,ann@example.com\n"), "features.csv", /title/);
  });

  it("a CSV of 200,001 records", async () => {
    const rows = Array.from({ length: 200_001 }, (_, i) => `Row ${i},r${i}`);
    const file = strToU8(`title,source_id\n${rows.join("\n")}\n`);
    await expectFileFailure({ source: "csv" }, file, "features.csv", /200,?000/);
  });
});
