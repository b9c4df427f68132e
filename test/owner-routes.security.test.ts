/**
 * Every owner route takes the project's secret key only (owner-api-v3.md, "Common rules"): no
 * key 401 missing_key, the embed key 403 not_allowed, another project's secret key 403
 * key_wrong_project, a project below PRO 403 not_allowed; a refused request changes nothing.
 * The matrix is every method of every path under /projects/{slug}/admin in the app's own
 * OpenAPI document, its path parameters filled with ids of a seeded project, so a new owner
 * route is covered as soon as it is described.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { importSnapshot } from "../src/admin/snapshot-import.ts";
import type { paths } from "./generated/api-types.ts";
import { createTestContext, demoSnapshotForTest, type TestContext } from "./support/harness.ts";

const METHODS = ["get", "post", "put", "patch", "delete"] as const;
const ADMIN_PREFIX = "/api/v3/projects/{slug}/admin";

interface SeededProject {
  slug: string;
  secretKey: string;
  embedKey: string;
  /** Path parameter values by the collection segment before them ("voters" -> a voter id). */
  idsBySegment: Record<string, string>;
}

interface MatrixEntry {
  method: string;
  /** The documented path, e.g. /api/v3/projects/{slug}/admin/voters/{voter_id}. */
  template: string;
}

/** Bodies a write route is sent (those of the former hand-written lists); other writes send {}. */
const SAMPLE_BODIES: Record<string, unknown> = {
  "PATCH /voters/{voter_id}": { banned: true },
  "POST /tiers": { name: "X", mrr_cents: 1 },
  "PATCH /tiers/{tier_id}": { name: "X" },
  "PATCH /settings": { name: "X" },
  "POST /keys/regenerate": { kind: "embed" },
  "POST /tags": { name: "Sneaky" },
  "PATCH /tags/{tag_id}": { name: "Sneaky" },
  "POST /boards": { name: "Sneaky", slug: "sneaky" },
  "PATCH /boards/{board_id}": { name: "Sneaky" },
  "POST /boards/{board_id}/columns": { name: "Sneaky", status: "open" },
  "PATCH /columns/{column_id}": { name: "Sneaky" },
  "POST /messages": { title: "Sneaky", body: "x" },
  "PATCH /messages/{id}": { title: "Sneaky" },
  "POST /releases": { name: "Sneaky" },
  "PATCH /releases/{id}": { name: "Sneaky" },
  "POST /features": { heading: "x" },
};

/** Every (method, path) of the document under the admin prefix. */
function ownerMatrix(document: { paths: Record<string, Record<string, unknown>> }): MatrixEntry[] {
  const entries: MatrixEntry[] = [];
  for (const [template, item] of Object.entries(document.paths)) {
    if (!template.startsWith(`${ADMIN_PREFIX}/`) && template !== ADMIN_PREFIX) continue;
    for (const method of METHODS) if (item[method] !== undefined) entries.push({ method: method.toUpperCase(), template });
  }
  return entries;
}

/** The template with {slug} and every id parameter filled from `project` (throws on an unknown one). */
function fill(template: string, project: SeededProject): string {
  const segments = template.split("/");
  return segments
    .map((segment, index) => {
      if (!segment.startsWith("{")) return segment;
      if (segment === "{slug}") return project.slug;
      const collection = segments[index - 1] ?? "";
      const id = project.idsBySegment[collection];
      if (id === undefined) throw new Error(`no seeded id for ${segment} after /${collection} in ${template}`);
      return id;
    })
    .join("/");
}

const bodyFor = (entry: MatrixEntry): unknown =>
  SAMPLE_BODIES[`${entry.method} ${entry.template.slice(ADMIN_PREFIX.length)}`] ??
  (["GET", "DELETE"].includes(entry.method) ? undefined : {});

let ctx: TestContext;
let matrix: MatrixEntry[];
let project: SeededProject;
let other: SeededProject;
let free: SeededProject;

/** The demo project (every kind of content) under a fresh slug, plus a webhook and a delivery. */
async function seed(plan?: string): Promise<SeededProject> {
  const demo = demoSnapshotForTest();
  const snapshot = plan ? { ...demo.snapshot, project: { ...demo.snapshot.project, plan } } : demo.snapshot;
  const imported = await importSnapshot(ctx.db, snapshot, {});
  const first = (refs: Record<string, number | string>): string => String(Object.values(refs)[0]);
  const ids = imported.ids;
  const projectRow = await ctx.db.selectFrom("projects").select("id").where("slug", "=", demo.slug).executeTakeFirstOrThrow();
  const webhook = await ctx.db
    .insertInto("webhooks")
    .values({ project_id: projectRow.id, url: "https://hooks.example/receive", events: [], secret: "whsec_test", disabled_reason: null })
    .returning("id")
    .executeTakeFirstOrThrow();
  const delivery = await ctx.db
    .insertInto("webhook_deliveries")
    .values({ webhook_id: webhook.id, event_id: "evt_matrix", event_type: "vote.created", event_seq: null, status: "failed", attempts: 1 })
    .returning("id")
    .executeTakeFirstOrThrow();
  const importRow = await ctx.db
    .insertInto("imports")
    .values({
      id: `imp_matrix_${projectRow.id}`,
      project_id: projectRow.id,
      source: "csv",
      dry_run: true,
      options: JSON.stringify({ boards: "roadmap", status_map: {} }),
    })
    .returning("id")
    .executeTakeFirstOrThrow();
  return {
    slug: demo.slug,
    secretKey: demo.secretKey,
    embedKey: demo.embedKey,
    idsBySegment: {
      voters: first(ids.voters),
      tiers: first(ids.tiers),
      tags: first(ids.tags),
      boards: first(ids.boards),
      columns: first(ids.columns),
      features: first(ids.features),
      comments: first(ids.comments),
      releases: first(ids.releases),
      messages: first(ids.messages),
      webhooks: String(webhook.id),
      deliveries: String(delivery.id),
      imports: importRow.id,
    },
  };
}

beforeAll(async () => {
  ctx = await createTestContext();
  const document = (await (await ctx.app.request("/api/v3/openapi.json")).json()) as { paths: Record<string, Record<string, unknown>> };
  matrix = ownerMatrix(document);
  project = await seed();
  other = await seed();
  free = await seed("free");
});
afterAll(() => ctx.close());

function request(entry: MatrixEntry, seeded: SeededProject, key: string | undefined): Promise<Response> {
  const payload = bodyFor(entry);
  return Promise.resolve(
    ctx.app.request(fill(entry.template, seeded), {
      method: entry.method,
      headers: {
        ...(key === undefined ? {} : { "X-API-Key": key }),
        ...(payload === undefined ? {} : { "Content-Type": "application/json" }),
      },
      body: payload === undefined ? undefined : JSON.stringify(payload),
    }),
  );
}

async function outcome(response: Response): Promise<[number, string | undefined]> {
  const envelope = (await response.json()) as { error?: { code?: string } | null };
  return [response.status, envelope.error?.code ?? undefined];
}

/** What every owner read of `seeded` answers, and its public board: equal before and after a refused matrix. */
async function stateOf(seeded: SeededProject): Promise<string> {
  const reads: unknown[] = [];
  for (const entry of matrix.filter((candidate) => candidate.method === "GET")) {
    const response = await request(entry, seeded, seeded.secretKey);
    reads.push([entry.template, response.status, await response.json()]);
  }
  const board = await ctx.app.request(`/api/v3/projects/${seeded.slug}`, { headers: { "X-API-Key": seeded.secretKey } });
  reads.push(await board.json());
  return JSON.stringify(reads);
}

describe("owner route matrix from the OpenAPI document", () => {
  it("covers every owner route the hand-written lists named, and more", () => {
    const listed = new Set(matrix.map((entry) => `${entry.method} ${entry.template.slice(ADMIN_PREFIX.length)}`));
    // The former hand lists: 12 accounts routes, 20 content routes, 4 features and comments routes.
    expect(matrix.length).toBeGreaterThanOrEqual(36);
    for (const known of [
      "GET /voters",
      "PATCH /voters/{voter_id}",
      "POST /keys/regenerate",
      "PATCH /settings",
      "DELETE /tags/{tag_id}",
      "POST /boards/{board_id}/columns",
      "DELETE /releases/{id}",
      "GET /features",
      "DELETE /comments/{cid}",
      "POST /webhooks/{webhook_id}/deliveries/{delivery_id}/redeliver",
      "GET /events",
    ]) {
      expect(listed, known).toContain(known);
    }
    // The generated client's types describe the same routes.
    const typed: (keyof paths)[] = [`${ADMIN_PREFIX}/voters/{voter_id}`, `${ADMIN_PREFIX}/webhooks`];
    for (const template of typed) expect(matrix.map((entry) => entry.template)).toContain(template);
  });

  it("no key 401 missing_key, embed key 403 not_allowed, other project's key 403 key_wrong_project, below PRO 403 not_allowed", async () => {
    const before = await stateOf(project);
    for (const entry of matrix) {
      const label = `${entry.method} ${entry.template}`;
      expect([label, ...(await outcome(await request(entry, project, undefined)))]).toEqual([label, 401, "missing_key"]);
      expect([label, ...(await outcome(await request(entry, project, project.embedKey)))]).toEqual([label, 403, "not_allowed"]);
      expect([label, ...(await outcome(await request(entry, project, other.secretKey)))]).toEqual([label, 403, "key_wrong_project"]);
      expect([label, ...(await outcome(await request(entry, free, free.secretKey)))]).toEqual([label, 403, "not_allowed"]);
    }
    expect(await stateOf(project)).toBe(before);
    // The embed key still works (the regeneration was refused).
    expect((await ctx.app.request(`/api/v3/projects/${project.slug}`, { headers: { "X-API-Key": project.embedKey } })).status).toBe(200);
  });
});
