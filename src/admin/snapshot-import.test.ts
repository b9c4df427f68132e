import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { sql } from "kysely";
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type DatabaseHandle, migrateToLatest, openDatabase } from "../../db/connect.ts";
import { buildDemoSnapshot, DEMO_FILE, formatSnapshot } from "../../scripts/demo/generate-demo.ts";
import { hashSecret } from "../lib/rules/secrets.ts";
import { voteExponent } from "../lib/rules/trending.ts";
import { readVoterCount } from "../routes/board/board.repository.ts";
import { mergeFeature } from "../routes/features/features.merge.repository.ts";
import { createKey, regenerateKey } from "../routes/keys/keys.owner.repository.ts";
import { DEMO_EMBED_KEY, DEMO_SECRET_KEY, loadDemoSnapshot } from "./demo.ts";
import type { SnapshotDocument, SnapshotInput } from "./snapshot.schema.ts";
import { exportSnapshot, portableSnapshot } from "./snapshot-export.ts";
import { importSnapshot, SnapshotValidationError } from "./snapshot-import.ts";

// One database for the file: PGlite in memory, or a fresh database on the DATABASE_URL server.
let handle: DatabaseHandle;
let dropDatabase: (() => Promise<void>) | undefined;

beforeAll(async () => {
  const url = process.env.DATABASE_URL;
  if (url) {
    const name = `fb_admin_test_${randomBytes(6).toString("hex")}`;
    const admin = postgres(url, { max: 1, onnotice: () => {} });
    await admin.unsafe(`CREATE DATABASE ${name}`);
    const own = new URL(url);
    own.pathname = `/${name}`;
    handle = await openDatabase({ DATABASE_URL: own.toString(), poolSize: 4 });
    dropDatabase = async () => {
      await admin.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await admin.end();
    };
  } else {
    handle = await openDatabase({ PGLITE_DIR: "memory://" });
  }
  await migrateToLatest(handle.db);
  // A new PGlite runs initdb: 6 s on an idle 2-core machine, 20-40 s on a loaded one.
}, 120_000);

afterAll(async () => {
  await handle?.close();
  await dropDatabase?.();
});

const stamp = (day: number, hour = 12) => new Date(Date.UTC(2026, 8, day, hour)).toISOString();

/** A small but complete project; `slug` keeps tests independent of each other. */
function fixture(slug: string) {
  return {
    format: "feedback-board-snapshot/1",
    project: { slug, name: "Acme" },
    keys: [
      { kind: "secret", key: `sk_${slug}_0123456789abcdef` },
      { kind: "embed", key: `ek_${slug}_0123456789abcdef` },
    ],
    tags: [{ ref: "t-ui", name: "UI" }],
    tiers: [{ ref: "pro", name: "Pro", mrr_cents: 4900, multiplier: 3 }],
    boards: [
      {
        ref: "roadmap",
        kind: "roadmap",
        name: "Roadmap",
        columns: [
          { ref: "c-open", name: "Suggestions", status: "open" },
          { ref: "c-done", name: "Done", status: "done", is_votable: false },
        ],
      },
      { ref: "mobile", kind: "custom", name: "Mobile", columns: [{ ref: "m-later", name: "Later" }] },
    ],
    voters: [
      { ref: "ada", display_name: "Ada", tier: "pro", anon_token: `anon_${slug}_ada_0123456789` },
      { ref: "bob", kind: "sso", sso_id: "bob-1", role: "owner" },
      { ref: "cy", tier: "pro" },
      { ref: "dee" },
    ],
    features: [
      { ref: "dark", board: "roadmap", column: "c-open", heading: "Dark mode", tags: ["t-ui"], created_at: stamp(1) },
      { ref: "sync", board: "roadmap", column: "c-done", heading: "Sync", author: "ada" },
      { ref: "widget", board: "mobile", column: "m-later", heading: "Widgets", status: "planned" },
      { ref: "old", board: "roadmap", status: "archived", heading: "Old", linked_feature: "dark" },
      { ref: "tablet", board: "mobile", column: "m-later", heading: "Tablet layout" },
    ],
    votes: [
      { voter: "ada", feature: "dark", created_at: stamp(2) },
      { voter: "bob", feature: "dark", created_at: stamp(3) },
      { voter: "cy", feature: "dark", created_at: stamp(5) },
      { voter: "bob", feature: "sync", created_at: stamp(4) },
    ],
    comments: [
      { ref: "k1", feature: "dark", voter: "ada", content: "Yes please", created_at: stamp(2, 13) },
      { ref: "k2", feature: "dark", voter: "bob", parent: "k1", content: "On it", created_at: stamp(2, 14) },
      { ref: "k3", feature: "dark", voter: "cy", parent: "k1", content: "+1", created_at: stamp(2, 15) },
      { ref: "k4", feature: "sync", voter: "dee", content: "Nice", created_at: stamp(4, 13) },
    ],
    likes: [
      { voter: "bob", comment: "k1" },
      { voter: "cy", comment: "k1" },
      { voter: "ada", comment: "k4" },
    ],
    releases: [
      {
        ref: "r1",
        name: "Version 1.4",
        body: "## New\n\n- sync",
        published_at: stamp(6),
        features: [{ feature: "sync", changelog_type: "new" }],
      },
    ],
    messages: [
      { ref: "m1", title: "Maintenance", body: "Down 2-3 UTC", platforms: ["ios"], min_app_version: "1.0.0", max_app_version: "2.0.0" },
    ],
    dismissals: [{ voter: "ada", message: "m1" }],
  } satisfies SnapshotInput;
}

async function projectExists(slug: string) {
  return (await handle.db.selectFrom("projects").select("id").where("slug", "=", slug).executeTakeFirst()) !== undefined;
}

async function refusal(input: unknown, options = {}): Promise<Array<{ path: string; message: string }>> {
  const error = await importSnapshot(handle.db, input, options).catch((e: unknown) => e);
  expect(error).toBeInstanceOf(SnapshotValidationError);
  return (error as SnapshotValidationError).issues;
}

describe("importSnapshot", () => {
  it("imports a minimal snapshot and returns the id map", async () => {
    const ids = await importSnapshot(
      handle.db,
      {
        format: "feedback-board-snapshot/1",
        project: { slug: "minimal", name: "Minimal" },
        boards: [{ ref: "rm", kind: "roadmap", name: "Roadmap", columns: [{ ref: "c1", name: "Open", status: "open" }] }],
        voters: [{ ref: "v" }],
        features: [{ ref: "f", board: "rm", column: "c1", heading: "First" }],
      },
      {},
    );
    expect(ids).toEqual({
      project: { slug: "minimal" },
      ids: {
        boards: { rm: 0 },
        columns: { c1: expect.any(Number) },
        tags: {},
        tiers: {},
        voters: { v: expect.stringMatching(/^v_/) },
        features: { f: expect.any(Number) },
        comments: {},
        releases: {},
        messages: {},
      },
    });
    const project = await handle.db.selectFrom("projects").selectAll().where("slug", "=", "minimal").executeTakeFirstOrThrow();
    expect(project.settings.allow_voting).toBe(true);
    expect(project.theme.dark.accent).toBe("#818cf8");
    const voter = await handle.db.selectFrom("voters").selectAll().where("public_id", "=", ids.ids.voters.v!).executeTakeFirstOrThrow();
    expect(voter.display_name).toMatch(/^\w+ \w+ \d{4}$/);
    const feature = await handle.db.selectFrom("features").selectAll().where("id", "=", ids.ids.features.f!).executeTakeFirstOrThrow();
    expect(feature).toMatchObject({ status: "open", column_id: ids.ids.columns.c1, vote_count: 0, trending_score: null });
  });

  it("reports every shape fault with its JSON path and writes nothing", async () => {
    const doc = fixture("shape-faults") as any;
    doc.project.slug = "Bad Slug";
    doc.keys[0].key = "short";
    doc.tiers[0].multiplier = 0;
    doc.tiers[0].mrr_cents = 12.5;
    doc.voters[0].mrr_override_cents = 1.5;
    doc.features[0].heading = "";
    doc.features[1].heading = "x".repeat(255);
    doc.features[2].description = "y".repeat(2001);
    doc.features[3].created_at = "yesterday";
    doc.messages[0].min_app_version = "1.2";
    doc.messages[0].platforms = ["android"];
    const paths = (await refusal(doc)).map((issue) => issue.path);
    expect(paths).toEqual(
      expect.arrayContaining([
        "project.slug",
        "keys[0].key",
        "tiers[0].multiplier",
        "tiers[0].mrr_cents",
        "voters[0].mrr_override_cents",
        "features[0].heading",
        "features[1].heading",
        "features[2].description",
        "features[3].created_at",
        "messages[0].min_app_version",
        "messages[0].platforms[0]",
      ]),
    );
    expect(await refusal({ format: "other" })).toEqual(
      expect.arrayContaining([
        { path: "format", message: 'must be "feedback-board-snapshot/1"' },
        expect.objectContaining({ path: "project" }),
      ]),
    );
  });

  it("reports every reference fault with its JSON path and writes nothing", async () => {
    const doc = fixture("ref-faults") as any;
    doc.tags.push({ ref: "t-ui", name: "Again" });
    doc.boards[0].columns.push({ ref: "c-none", name: "No status" });
    doc.boards[0].columns.push({ ref: "c-odd", name: "Odd", status: "someday" });
    doc.boards[1].columns.push({ ref: "m-x", name: "X", status: "open" });
    doc.boards.push({ ref: "rm2", kind: "roadmap", name: "Second", slug: "second" });
    doc.voters[2].tier = "gold";
    doc.features[0].column = "m-later";
    doc.features[2].column = null;
    doc.features[4].tags = ["t-missing"];
    doc.votes.push({ voter: "ada", feature: "dark" });
    doc.votes.push({ voter: "ada", feature: "nope" });
    doc.comments.push({ ref: "k5", feature: "dark", voter: "dee", parent: "k2", content: "deep" });
    doc.comments.push({ ref: "k6", feature: "sync", voter: "dee", parent: "k1", content: "elsewhere" });
    doc.likes.push({ voter: "bob", comment: "k1" });
    doc.messages[0].action_label = "Go";
    doc.dismissals.push({ voter: "ada", message: "m1" });
    const issues = await refusal(doc);
    const byPath = Object.fromEntries(issues.map((issue) => [issue.path, issue.message]));
    expect(byPath).toMatchObject({
      "tags[1].ref": expect.stringContaining('duplicate ref "t-ui"'),
      "boards[0].columns[2].status": "a roadmap column must carry a status",
      "boards[0].columns[3].status": expect.stringContaining('"someday" is not one of'),
      "boards[1].columns[1].status": expect.stringContaining("custom board column has no status"),
      "boards[2].kind": expect.stringContaining("second roadmap"),
      "voters[2].tier": 'no tier with ref "gold"',
      "features[0].column": 'no column "m-later" on board "roadmap"',
      "features[2].column": 'required unless status is "archived"',
      "features[4].tags[0]": 'no tag with ref "t-missing"',
      "votes[4]": expect.stringContaining("already has a vote"),
      "votes[5].feature": 'no feature with ref "nope"',
      "comments[4].parent": expect.stringContaining("replies are one level deep"),
      "comments[5].parent": expect.stringContaining('belongs to feature "dark"'),
      "likes[3]": expect.stringContaining("already has a like"),
      "messages[0].action_label": "only allowed together with action_url",
      "dismissals[1]": expect.stringContaining("already has a dismissal"),
    });
    expect(await projectExists("ref-faults")).toBe(false);

    const noRoadmap = fixture("no-roadmap") as any;
    noRoadmap.boards = noRoadmap.boards.slice(1);
    noRoadmap.features = noRoadmap.features.filter((f: { board: string }) => f.board === "mobile");
    noRoadmap.votes = noRoadmap.comments = noRoadmap.likes = noRoadmap.releases = [];
    expect(await refusal(noRoadmap)).toContainEqual({ path: "boards", message: expect.stringContaining("exactly one") });
  });

  it("refuses an existing slug unless replace is given", async () => {
    await importSnapshot(handle.db, fixture("dup"), {});
    expect(await refusal(fixture("dup"))).toEqual([
      { path: "project.slug", message: 'project "dup" already exists; import with --replace to overwrite it' },
    ]);
    const smaller = fixture("dup");
    smaller.features = smaller.features.filter((f) => f.ref !== "tablet");
    const ids = await importSnapshot(handle.db, smaller, { replace: true });
    const projects = await handle.db.selectFrom("projects").select("id").where("slug", "=", "dup").execute();
    expect(projects).toHaveLength(1);
    const features = await handle.db.selectFrom("features").select("id").where("project_id", "=", projects[0]!.id).execute();
    expect(features.map((f) => f.id).sort()).toEqual(Object.values(ids.ids.features).sort());
  });

  it("refuses a key or anonymous token another project holds", async () => {
    await importSnapshot(handle.db, fixture("holder"), {});
    const thief = fixture("thief") as any;
    thief.keys[0].key = "sk_holder_0123456789abcdef";
    thief.voters[0].anon_token = "anon_holder_ada_0123456789";
    expect(await refusal(thief)).toEqual([
      { path: "keys[0].key", message: "already in use by another project" },
      { path: "voters[0].anon_token", message: "already the token of a voter in another project" },
    ]);
    expect(await projectExists("thief")).toBe(false);
  });

  it("refuses every value beyond a bound of the database schema, with its path, and writes nothing", async () => {
    const doc = fixture("bounds") as any;
    doc.features[0].position = 2 ** 31;
    doc.features[1].heading = "Sync\u0000now";
    doc.features[2].effort = -(2 ** 31) - 1;
    doc.tiers[0].mrr_cents = 1e15;
    doc.voters[3].mrr_override_cents = 2 ** 31;
    doc.messages[0].priority = 1e10;
    doc.project.theme = { light: { accent: "#fff\u0000" } };
    doc.project.allowed_origins = ["https://a.example", "https://\ud800.example"];
    doc.comments[0].content = "tail \udc00";
    doc.votes[0].created_at = "0000-01-01T00:00:00Z";
    doc.votes[1].created_at = "0001-01-01T00:30:00+01:00";
    doc.releases[0].view_count = 2 ** 31;
    expect(await refusal(doc)).toEqual(
      expect.arrayContaining([
        { path: "features[0].position", message: "must be at most 2147483647 (a 32-bit integer column)" },
        { path: "features[1].heading", message: "must not contain NUL (\\u0000) or an unpaired surrogate" },
        { path: "features[2].effort", message: "must be at least -2147483648" },
        { path: "tiers[0].mrr_cents", message: "must be at most 2147483647 (a 32-bit integer column)" },
        { path: "voters[3].mrr_override_cents", message: "must be at most 2147483647 (a 32-bit integer column)" },
        { path: "messages[0].priority", message: "must be at most 2147483647 (a 32-bit integer column)" },
        { path: "project.theme.light.accent", message: "must not contain NUL (\\u0000) or an unpaired surrogate" },
        { path: "project.allowed_origins[1]", message: "must not contain NUL (\\u0000) or an unpaired surrogate" },
        { path: "comments[0].content", message: "must not contain NUL (\\u0000) or an unpaired surrogate" },
        { path: "votes[0].created_at", message: "must fall within the years 0001..9999 (UTC)" },
        { path: "votes[1].created_at", message: "must fall within the years 0001..9999 (UTC)" },
        { path: "releases[0].view_count", message: "must be at most 2147483647 (a 32-bit integer column)" },
      ]),
    );
    expect(await projectExists("bounds")).toBe(false);

    // A bound no single value breaks: a feature's weighted score is an int4 sum of multipliers.
    const heavy = fixture("bounds") as any;
    heavy.tiers[0].multiplier = 2 ** 30;
    heavy.voters[2].tier = "pro";
    expect(await refusal(heavy)).toEqual([
      { path: "votes[2]", message: `feature "dark"'s weighted score would exceed 2147483647 (a 32-bit integer column)` },
    ]);
    expect(await projectExists("bounds")).toBe(false);
  });

  it("refuses restore fields that conflict, are malformed or belong to another project", async () => {
    const { ids } = await importSnapshot(handle.db, fixture("owner-of-ids"), {});
    const doc = fixture("claims-ids") as any;
    doc.keys[0].key_sha256 = hashSecret(doc.keys[0].key);
    doc.keys[1] = { kind: "embed", key_sha256: "ABC" };
    doc.voters[0].anon_token_sha256 = hashSecret("something else entirely");
    doc.voters[1].voter_id = ids.voters.ada;
    doc.voters[2].voter_id = "not a voter id!";
    doc.features[0].id = ids.features.dark;
    doc.features[1].id = 0;
    doc.tags[0].id = ids.tags["t-ui"];
    expect(await refusal(doc)).toEqual([
      { path: "keys[0].key_sha256", message: "give key or key_sha256, not both" },
      { path: "keys[1].key_sha256", message: "must be a SHA-256 digest: 64 lowercase hex digits" },
      { path: "voters[2].voter_id", message: "must be 1..64 characters of A-Z a-z 0-9 _ -" },
      { path: "features[1].id", message: "must be a positive id" },
    ]);
    doc.keys = [{ kind: "secret", key_sha256: hashSecret("sk_owner-of-ids_0123456789abcdef") }];
    delete doc.voters[2].voter_id;
    doc.features[1].id = doc.features[0].id;
    expect(await refusal(doc)).toEqual([
      { path: "features[1].id", message: `id ${ids.features.dark} already used by features[0]` },
      { path: "voters[0].anon_token_sha256", message: "give anon_token or anon_token_sha256, not both" },
    ]);
    doc.voters[0].anon_token = null;
    doc.voters[0].anon_token_sha256 = hashSecret("anon_owner-of-ids_ada_0123456789");
    delete doc.features[1].id;
    expect(await refusal(doc)).toEqual([
      { path: "keys[0].key_sha256", message: "already in use by another project" },
      { path: "voters[0].anon_token_sha256", message: "already the token of a voter in another project" },
      { path: "voters[1].voter_id", message: `voter_id "${ids.voters.ada}" belongs to another project` },
      { path: "tags[0].id", message: `id ${ids.tags["t-ui"]} belongs to another project` },
      { path: "features[0].id", message: `id ${ids.features.dark} belongs to another project` },
    ]);
    expect(await projectExists("claims-ids")).toBe(false);
  });

  it("keeps the ids a file gives and continues every sequence after the highest", async () => {
    const highest = await handle.db
      .selectFrom("features")
      .select((eb) => eb.fn.max("id").as("id"))
      .executeTakeFirstOrThrow();
    const far = (highest.id ?? 0) + 1000;
    const doc = fixture("given-ids") as any;
    doc.features[0].id = far;
    doc.features[1].id = far - 500;
    doc.voters[0].voter_id = "v_given_ada";
    const { ids } = await importSnapshot(handle.db, doc, {});
    expect(ids.features.dark).toBe(far);
    expect(ids.features.sync).toBe(far - 500);
    expect(ids.voters.ada).toBe("v_given_ada");
    // Rows without a given id come from the sequence, which now starts past the highest given one.
    expect(ids.features.widget).toBeGreaterThan(far);
    const later = await importSnapshot(handle.db, fixture("after-given-ids"), {});
    expect(Math.min(...Object.values(later.ids.features))).toBeGreaterThan(far);
  });

  it("restores a project from its export: ids, keys, tokens, counters, the project's own id", async () => {
    const slug = "restored";
    await importSnapshot(handle.db, fixture(slug), {});
    const before = await handle.db.selectFrom("projects").select("id").where("slug", "=", slug).executeTakeFirstOrThrow();
    const internal = () =>
      handle.db.selectFrom("voters").select(["id", "public_id"]).where("project_id", "=", before.id).orderBy("id").execute();
    const votersBefore = await internal();
    const exported = await exportSnapshot(handle.db, slug);
    expect(exported.keys).toEqual([
      { kind: "secret", key_sha256: hashSecret(`sk_${slug}_0123456789abcdef`) },
      { kind: "embed", key_sha256: hashSecret(`ek_${slug}_0123456789abcdef`) },
    ]);
    expect(exported.voters[0]).toMatchObject({ anon_token: null, anon_token_sha256: hashSecret(`anon_${slug}_ada_0123456789`) });
    expect(exported.voters.every((v) => typeof v.voter_id === "string")).toBe(true);
    expect(exported.features.every((f) => typeof f.id === "number")).toBe(true);
    const countersBefore = await counters(slug);

    // Change the project after the export: the restore must take it back to the export.
    await handle.db.deleteFrom("comments").where("project_id", "=", before.id).execute();
    await handle.db.deleteFrom("api_keys").where("project_id", "=", before.id).execute();
    await handle.db.updateTable("features").set({ heading: "changed" }).where("project_id", "=", before.id).execute();

    await importSnapshot(handle.db, JSON.parse(JSON.stringify(exported)), { replace: true });
    expect(await exportSnapshot(handle.db, slug)).toEqual(exported);
    expect(await counters(slug)).toEqual(countersBefore);
    expect((await handle.db.selectFrom("projects").select("id").where("slug", "=", slug).executeTakeFirstOrThrow()).id).toBe(before.id);
    expect(await internal()).toEqual(votersBefore);
  });

  it("refuses invalid merges and webhooks with their JSON paths and writes nothing", async () => {
    const secret = `whsec_${Buffer.alloc(32, 7).toString("base64")}`;
    const shape = fixture("bad-integrations") as any;
    shape.features[3].merge = { into: "dark", previous_status: "someday" };
    shape.webhooks = [
      { url: "https://hooks.example.com/a", events: ["vote.casted"], secret: "whsec_short" },
      { url: "https://hooks.example.com/b", secret: `whsec_${Buffer.alloc(16).toString("base64")}`, disabled_reason: "tired" },
    ];
    expect(await refusal(shape)).toEqual([
      { path: "features[3].merge.previous_status", message: expect.stringContaining("Invalid option") },
      { path: "webhooks[0].events[0]", message: expect.stringContaining("unknown event type") },
      { path: "webhooks[0].secret", message: "must be whsec_ followed by base64" },
      { path: "webhooks[1].disabled_reason", message: expect.stringContaining("Invalid option") },
      { path: "webhooks[1].secret", message: "must encode at least 24 bytes" },
    ]);

    const refs = fixture("bad-integrations") as any;
    refs.features[3].merge = { into: "old", previous_status: "open" }; // old: into itself
    refs.features[1].merge = {
      into: "dark",
      previous_status: "done",
      previous_column: "m-later", // a column of another board
      moved_voters: ["dee"], // dee has no vote on dark
      kept_voters: ["ada", "ada", "nobody"],
      previous_linked_feature: "gone",
      kept_vote_times: [{ voter: "cy", duplicate_created_at: stamp(1) }],
    };
    refs.features[4].merge = { into: "sync", previous_status: "open" }; // sync is merged itself
    refs.features[2].merge = { into: "nope", previous_status: "open" };
    refs.webhooks = [
      { url: "ftp://hooks.example.com/a", secret },
      { url: "http://hooks.example.com/b", events: ["vote.created", "vote.created"] },
      { url: "https://10.0.0.1/c", enabled: true, disabled_reason: "gone" },
      { url: "https://user:pw@hooks.example.com/d", previous_secret: secret },
    ];
    const issues = await refusal(refs);
    expect(issues).toEqual([
      { path: "features[1].merge.previous_column", message: 'no column "m-later" on board "roadmap"' },
      { path: "features[1].merge.previous_linked_feature", message: 'no feature with ref "gone"' },
      { path: "features[1].merge.moved_voters[0]", message: 'voter "dee" has no vote on "dark", where a moved vote sits' },
      { path: "features[1].merge.kept_voters[1]", message: 'voter "ada" is listed twice in this merge' },
      { path: "features[1].merge.kept_voters[2]", message: 'no voter with ref "nobody"' },
      { path: "features[1].merge.kept_vote_times[0].voter", message: 'voter "cy" is not in kept_voters' },
      { path: "features[2].merge.into", message: 'no feature with ref "nope"' },
      { path: "features[3].merge.into", message: "a feature cannot be merged into itself" },
      { path: "features[4].merge.into", message: 'feature "sync" is itself merged (into "dark"); a merge target cannot be merged' },
      { path: "webhooks[0].url", message: "must be an https URL (http only where WEBHOOK_ALLOW_PRIVATE_URLS=true)" },
      { path: "webhooks[1].url", message: "must be an https URL (http only where WEBHOOK_ALLOW_PRIVATE_URLS=true)" },
      { path: "webhooks[1].events[1]", message: '"vote.created" already listed at events[0]' },
      { path: "webhooks[2].url", message: expect.stringContaining("10.0.0.1 is not a public address (private)") },
      { path: "webhooks[2].disabled_reason", message: "only a disabled webhook has one; leave it null or set enabled to false" },
      { path: "webhooks[3].url", message: "must not carry a user name or password" },
      { path: "webhooks[3].previous_secret", message: "previous_secret and previous_secret_expires_at go together" },
    ]);
    // Where the configuration allows private URLs (WEBHOOK_ALLOW_PRIVATE_URLS=true), http and private addresses pass.
    const allowed = (await refusal(refs, { allowPrivateWebhookUrls: true })).map((issue) => issue.path);
    expect(allowed).not.toContain("webhooks[1].url");
    expect(allowed).not.toContain("webhooks[2].url");
    expect(allowed).toContain("webhooks[0].url");
    expect(await projectExists("bad-integrations")).toBe(false);

    // A webhook id another project holds.
    const holder = fixture("webhook-holder") as any;
    holder.webhooks = [{ url: "https://hooks.example.com/h", secret }];
    await importSnapshot(handle.db, holder, {});
    const [held] = (await exportSnapshot(handle.db, "webhook-holder")).webhooks;
    const thief = fixture("webhook-thief") as any;
    thief.webhooks = [{ id: held!.id, url: "https://hooks.example.com/t" }];
    expect(await refusal(thief)).toEqual([{ path: "webhooks[0].id", message: `id ${held!.id} belongs to another project` }]);
    expect(await projectExists("webhook-thief")).toBe(false);
  });

  it("restores webhooks and merge records from an export exactly", async () => {
    const slug = "merge-restore";
    const doc = fixture(slug) as any;
    doc.votes.push(
      { voter: "dee", feature: "sync", created_at: stamp(1) }, // moved
      { voter: "ada", feature: "sync", created_at: stamp(6) }, // kept: the target vote (day 2) is earlier (bob too)
      { voter: "cy", feature: "sync", created_at: stamp(1, 9) }, // kept: earlier than the target vote (day 5)
    );
    const current = `whsec_${Buffer.alloc(32, 1).toString("base64")}`;
    const previous = `whsec_${Buffer.alloc(32, 2).toString("base64")}`;
    doc.webhooks = [
      { url: "https://hooks.example.com/votes", events: ["vote.created", "vote.deleted"], description: "Votes", secret: current },
      {
        url: "https://hooks.example.com/all",
        enabled: false,
        disabled_reason: "failing",
        secret: `whsec_${Buffer.alloc(32, 3).toString("base64")}`,
        previous_secret: previous,
        previous_secret_expires_at: new Date(Date.now() + 3_600_000).toISOString(),
        created_at: stamp(3),
      },
      // Its rotation overlap is over: the export leaves the old secret out.
      { url: "https://hooks.example.com/old", secret: previous, previous_secret: current, previous_secret_expires_at: stamp(1) },
    ];
    const { ids } = await importSnapshot(handle.db, doc, {});
    const project = await handle.db.selectFrom("projects").select("id").where("slug", "=", slug).executeTakeFirstOrThrow();
    await handle.db.transaction().execute((trx) => mergeFeature(trx, project.id, ids.features.sync!, ids.features.dark!, new Date()));
    const mergeRecord = async () => ({
      merges: await handle.db
        .selectFrom("feature_merges")
        .select(["source_id", "target_id", "previous_status", "previous_column_id", "previous_linked_feature_id", "linked_set_by_merge"])
        .where("project_id", "=", project.id)
        .execute(),
      votes: await handle.db
        .selectFrom("feature_merge_votes as mv")
        .innerJoin("feature_merges as m", "m.id", "mv.merge_id")
        .select(["mv.voter_id", "mv.kind", "mv.weight", "mv.created_at", "mv.target_weight", "mv.target_created_at"])
        .where("m.project_id", "=", project.id)
        .orderBy("mv.voter_id")
        .execute(),
      webhooks: await handle.db.selectFrom("webhooks").selectAll().where("project_id", "=", project.id).orderBy("id").execute(),
    });
    const before = await mergeRecord();
    // In voter order: ada, bob (fixture: both votes, the target's earlier), cy, dee.
    expect(before.votes.map((v) => [v.kind, v.target_created_at !== null])).toEqual([
      ["duplicate", false],
      ["duplicate", false],
      ["duplicate", true],
      ["moved", false],
    ]);
    const countersBefore = await counters(slug);

    const exported = await exportSnapshot(handle.db, slug);
    const sync = exported.features.find((f) => f.id === ids.features.sync)!;
    expect(sync.merge).toEqual({
      into: `feature-${ids.features.dark}`,
      previous_status: "done",
      previous_column: `column-${ids.columns["c-done"]}`,
      moved_voters: [expect.stringMatching(/^voter-/)],
      kept_voters: [expect.stringMatching(/^voter-/), expect.stringMatching(/^voter-/), expect.stringMatching(/^voter-/)],
      previous_linked_feature: null,
      kept_vote_times: [
        { voter: expect.any(String), duplicate_created_at: stamp(6), target_created_at: null },
        { voter: expect.any(String), duplicate_created_at: stamp(4), target_created_at: null },
        { voter: expect.any(String), duplicate_created_at: stamp(1, 9), target_created_at: stamp(5) },
      ],
    });
    expect(exported.webhooks.map((w) => [w.secret, w.previous_secret, w.enabled, w.disabled_reason])).toEqual([
      [current, null, true, null],
      [doc.webhooks[1].secret, previous, false, "failing"],
      [previous, null, true, null],
    ]);

    await importSnapshot(handle.db, JSON.parse(JSON.stringify(exported)), { replace: true });
    const after = await mergeRecord();
    // The merge record is rebuilt from the file; a previous secret whose overlap ended is not carried.
    expect(after.merges).toEqual(before.merges);
    expect(after.votes).toEqual(before.votes);
    expect(after.webhooks).toEqual(
      before.webhooks.map((w, i) => (i === 2 ? { ...w, previous_secret: null, previous_secret_expires_at: null } : w)),
    );
    expect(await counters(slug)).toEqual(countersBefore);
    expect(await exportSnapshot(handle.db, slug)).toEqual(exported);
  });

  it("stores derived rows and computes counters in SQL", async () => {
    const { ids } = await importSnapshot(handle.db, fixture("counters"), {});
    const db = handle.db;
    const features = await db.selectFrom("features").selectAll().where("id", "in", Object.values(ids.features)).execute();
    const feature = (ref: string) => features.find((f) => f.id === ids.features[ref])!;
    // dark: ada (pro x3), bob (no tier), cy (pro x3); sync: bob.
    expect(feature("dark")).toMatchObject({ vote_count: 3, weighted_score: 7, comment_count: 3, status: "open" });
    expect(feature("sync")).toMatchObject({ vote_count: 1, weighted_score: 1, comment_count: 1, status: "done" });
    expect(feature("widget")).toMatchObject({
      vote_count: 0,
      weighted_score: 0,
      comment_count: 0,
      status: "planned",
      trending_score: null,
    });
    expect(feature("tablet").status).toBe("open");
    expect(feature("old")).toMatchObject({ status: "archived", column_id: null, linked_feature_id: ids.features.dark });

    const exponent = async (at: string) =>
      (await sql<{ x: number }>`SELECT ${voteExponent(sql`${at}::timestamptz`)} AS x`.execute(db)).rows[0]!.x;
    const xs = await Promise.all([stamp(2), stamp(3), stamp(5)].map(exponent));
    const top = Math.max(...xs);
    expect(feature("dark").trending_score).toBeCloseTo(top + Math.log(xs.reduce((s, x) => s + Math.exp(x - top), 0)), 9);
    expect(feature("sync").trending_score).toBeCloseTo(await exponent(stamp(4)), 9);

    const comments = await db
      .selectFrom("comments")
      .select(["id", "like_count", "parent_id"])
      .where("id", "in", Object.values(ids.comments))
      .execute();
    const comment = (ref: string) => comments.find((c) => c.id === ids.comments[ref])!;
    expect(comment("k1").like_count).toBe(2);
    expect(comment("k4").like_count).toBe(1);
    expect(comment("k2")).toMatchObject({ like_count: 0, parent_id: ids.comments.k1 });

    const voters = await db.selectFrom("voters").selectAll().where("public_id", "in", Object.values(ids.voters)).execute();
    const voter = (ref: string) => voters.find((v) => v.public_id === ids.voters[ref])!;
    expect([voter("ada").vote_count, voter("bob").vote_count, voter("cy").vote_count, voter("dee").vote_count]).toEqual([1, 2, 1, 0]);
    expect(voter("ada").anon_token_hash).toBe(hashSecret("anon_counters_ada_0123456789"));
    expect(voter("bob")).toMatchObject({ kind: "sso", sso_id: "bob-1", role: "owner", anon_token_hash: null });

    const project = await db.selectFrom("projects").selectAll().where("slug", "=", "counters").executeTakeFirstOrThrow();
    expect(await readVoterCount(db, project.id)).toBe(3);
    const votes = await db.selectFrom("votes").select(["voter_id", "weight", "project_id"]).where("project_id", "=", project.id).execute();
    expect(votes.map((v) => v.weight).sort()).toEqual([1, 1, 3, 3]);
    const keys = await db
      .selectFrom("api_keys")
      .select(["kind", "key_hash"])
      .where("project_id", "=", project.id)
      .orderBy("kind")
      .execute();
    expect(keys).toEqual([
      { kind: "embed", key_hash: hashSecret("ek_counters_0123456789abcdef") },
      { kind: "secret", key_hash: hashSecret("sk_counters_0123456789abcdef") },
    ]);
    const release = await db.selectFrom("releases").selectAll().where("id", "=", ids.releases.r1!).executeTakeFirstOrThrow();
    expect(release).toMatchObject({ slug: "version-1-4", body_html: expect.stringContaining("<h2>New</h2>") });
  });
});

/** Replaces every ref by its list and position, so two exports of equal data compare equal. */
function canonical(doc: SnapshotDocument) {
  const maps: Record<string, Map<string, string>> = {};
  const name = (list: string, items: Array<{ ref: string }>) => {
    maps[list] = new Map(items.map((item, i) => [item.ref, `${list}#${i}`]));
  };
  name("boards", doc.boards);
  name(
    "columns",
    doc.boards.flatMap((b) => b.columns),
  );
  name("tags", doc.tags);
  name("tiers", doc.tiers);
  name("voters", doc.voters);
  name("features", doc.features);
  name("comments", doc.comments);
  name("releases", doc.releases);
  name("messages", doc.messages);
  const to = (list: string) => (ref: string | null) => (ref === null ? null : maps[list]!.get(ref)!);
  const [board, column, tag, tier, voter, feature, comment, release, message] = [
    "boards",
    "columns",
    "tags",
    "tiers",
    "voters",
    "features",
    "comments",
    "releases",
    "messages",
  ].map(to);
  return {
    ...doc,
    project: { ...doc.project, slug: "(any)" },
    tags: doc.tags.map((t) => ({ ...t, ref: tag!(t.ref) })),
    tiers: doc.tiers.map((t) => ({ ...t, ref: tier!(t.ref) })),
    boards: doc.boards.map((b) => ({ ...b, ref: board!(b.ref), columns: b.columns.map((c) => ({ ...c, ref: column!(c.ref) })) })),
    voters: doc.voters.map((v) => ({ ...v, ref: voter!(v.ref), tier: tier!(v.tier) })),
    features: doc.features.map((f) => ({
      ...f,
      ref: feature!(f.ref),
      board: board!(f.board),
      column: column!(f.column),
      author: voter!(f.author),
      linked_feature: feature!(f.linked_feature),
      tags: f.tags.map((t) => tag!(t)),
    })),
    votes: doc.votes.map((v) => ({ ...v, voter: voter!(v.voter), feature: feature!(v.feature) })),
    comments: doc.comments.map((c) => ({
      ...c,
      ref: comment!(c.ref),
      feature: feature!(c.feature),
      voter: voter!(c.voter),
      parent: comment!(c.parent),
    })),
    likes: doc.likes.map((l) => ({ voter: voter!(l.voter), comment: comment!(l.comment) })),
    releases: doc.releases.map((r) => ({
      ...r,
      ref: release!(r.ref),
      features: r.features.map((e) => ({ ...e, feature: feature!(e.feature) })),
    })),
    messages: doc.messages.map((m) => ({ ...m, ref: message!(m.ref) })),
    dismissals: doc.dismissals.map((d) => ({ voter: voter!(d.voter), message: message!(d.message) })),
  };
}

/** The project's stored counters: every feature's, in id order, and the project's voter count. */
async function counters(slug: string) {
  const project = await handle.db.selectFrom("projects").select("id").where("slug", "=", slug).executeTakeFirstOrThrow();
  const features = await handle.db
    .selectFrom("features")
    .select(["vote_count", "weighted_score", "trending_score", "comment_count"])
    .where("project_id", "=", project.id)
    .orderBy("id")
    .execute();
  return {
    // Float sums depend on row order: compare trending scores to 9 places.
    features: features.map((row) => ({ ...row, trending_score: row.trending_score?.toFixed(9) ?? null })),
    voterCount: await readVoterCount(handle.db, project.id),
  };
}

describe("exportSnapshot", () => {
  it("round-trips: export -> import -> export gives the same document (modulo refs)", async () => {
    await importSnapshot(handle.db, loadDemoSnapshot(), { replace: true });
    const first = portableSnapshot(await exportSnapshot(handle.db, "lumen"));
    expect(first.keys).toEqual([]);
    expect(first.voters.every((v) => v.anon_token === null && v.anon_token_sha256 === null && v.voter_id === undefined)).toBe(true);
    expect(first.boards[0]!.ref).toBe("roadmap");

    await importSnapshot(handle.db, { ...first, project: { ...first.project, slug: "lumen-copy" } }, { replace: true });
    const second = portableSnapshot(await exportSnapshot(handle.db, "lumen-copy"));
    expect(canonical(second)).toEqual(canonical(first));
    expect(await counters("lumen-copy")).toEqual(await counters("lumen"));

    const demo = buildDemoSnapshot();
    expect(first.features).toHaveLength(demo.features!.length);
    expect(first.votes).toHaveLength(demo.votes!.length);
    expect(first.comments).toHaveLength(demo.comments!.length);
    expect(first.likes).toHaveLength(demo.likes!.length);
  }, 20_000);

  it("throws for an unknown slug", async () => {
    await expect(exportSnapshot(handle.db, "no-such-project")).rejects.toThrow('no project with slug "no-such-project"');
  });
});

describe("demo snapshot", () => {
  it("is what the generator produces and carries the documented keys", () => {
    expect(readFileSync(DEMO_FILE, "utf8")).toBe(formatSnapshot(buildDemoSnapshot()));
    const keys = loadDemoSnapshot().keys.map((k) => k.key);
    expect(keys).toEqual([DEMO_SECRET_KEY, DEMO_EMBED_KEY]);
  });
});

describe("keys", () => {
  it("creates and regenerates keys, storing only hashes", async () => {
    await importSnapshot(handle.db, fixture("keyed"), {});
    const project = await handle.db.selectFrom("projects").select("id").where("slug", "=", "keyed").executeTakeFirstOrThrow();
    const stored = () =>
      handle.db.selectFrom("api_keys").select(["kind", "key_hash"]).where("project_id", "=", project.id).orderBy("id").execute();

    const added = await createKey(handle.db, "keyed", "embed");
    expect(added).toMatch(/^fb_ek_/);
    expect((await stored()).filter((k) => k.kind === "embed")).toHaveLength(2);

    const fresh = await regenerateKey(handle.db, "keyed", "embed");
    expect(await stored()).toEqual([
      { kind: "secret", key_hash: hashSecret("sk_keyed_0123456789abcdef") },
      { kind: "embed", key_hash: hashSecret(fresh) },
    ]);
    await expect(createKey(handle.db, "missing", "secret")).rejects.toThrow('no project with slug "missing"');
  });
});
