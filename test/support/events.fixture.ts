/**
 * Fixture of the events tests: a project whose changes are read back through GET /events.
 *
 * Voters: ada (tier pro x3), bob (role editor), cy, and v0..v29 (plain), each with an anonymous
 * token. Features: hot (8 imported votes by v0..v7, milestone 10 two votes away; tags mobile and
 * api, linked to plain, in release r0, with description, progress, effort, start date), dup (16 votes by
 * v10..v25, to merge into hot), plain (no votes), pending (a suggestion by cy awaiting approval).
 * Comment c1 by ada on plain. Release r0 published in the past.
 */
import { randomBytes } from "node:crypto";
import { expect } from "vitest";
import { body, type ImportedProject, type Json, type TestContext } from "./harness.ts";

export const EXTRA_VOTERS = 30;

export interface EventsProject extends ImportedProject {
  tokens: Record<string, string>;
}

/** Imports a fresh events project through `ctx`. */
export async function importEventsProject(ctx: Pick<TestContext, "importProject">): Promise<EventsProject> {
  const refs = ["ada", "bob", "cy", ...Array.from({ length: EXTRA_VOTERS }, (_, i) => `v${i}`)];
  const tokens = Object.fromEntries(refs.map((ref) => [ref, `anon_${randomBytes(18).toString("base64url")}`]));
  const votes = [
    ...Array.from({ length: 8 }, (_, i) => ({ voter: `v${i}`, feature: "hot", created_at: "2026-10-01T00:00:00Z" })),
    ...Array.from({ length: 16 }, (_, i) => ({ voter: `v${i + 10}`, feature: "dup", created_at: "2026-10-02T00:00:00Z" })),
  ];
  const project = await ctx.importProject({
    tiers: [{ ref: "pro", name: "Pro", mrr_cents: 4900, multiplier: 3 }],
    voters: refs.map((ref) => ({
      ref,
      kind: "anonymous",
      anon_token: tokens[ref],
      display_name: ref,
      tier: ref === "ada" ? "pro" : null,
      role: ref === "bob" ? "editor" : null,
    })),
    features: [
      {
        ref: "hot",
        board: "roadmap",
        column: "c-planned",
        heading: "Hot",
        description: "Often asked",
        tags: ["mobile", "api"],
        linked_feature: "plain",
        progress: 30,
        effort: 5,
        start_date: "2026-09-01T10:00:00Z",
      },
      { ref: "dup", board: "roadmap", column: "c-planned", heading: "Duplicate of hot" },
      { ref: "plain", board: "roadmap", column: "c-planned", heading: "Plain" },
      { ref: "pending", board: "roadmap", column: "c-open", heading: "Pending", is_approved: false, author: "cy" },
    ],
    votes,
    comments: [{ ref: "c1", feature: "plain", voter: "ada", content: "First" }],
    tags: [
      { ref: "mobile", name: "Mobile" },
      { ref: "api", name: "api" },
    ],
    releases: [
      {
        ref: "r0",
        name: "0.9",
        body: "Old",
        published_at: "2026-01-01T00:00:00Z",
        features: [{ feature: "hot", changelog_type: "improvement" }],
      },
    ],
  });
  return { ...project, tokens };
}

export const adminPath = (project: ImportedProject, path: string) => `/api/v3/projects/${project.slug}/admin${path}`;
export const publicPath = (project: ImportedProject, path: string) => `/api/v3/projects/${project.slug}${path}`;
export const featureId = (project: ImportedProject, ref: string): number => project.ids.ids.features[ref];
export const voterId = (project: ImportedProject, ref: string): string => project.ids.ids.voters[ref];

/** The envelope of `response`, asserting its status. */
export async function expectStatus(response: Response, status: number): Promise<Json> {
  const envelope = await body(response);
  expect(response.status, JSON.stringify(envelope)).toBe(status);
  return envelope;
}

/**
 * Every event of the project through GET /events (oldest first, all pages), once at least
 * `atLeast` are listed: an event is listed once every older transaction of the cluster has ended,
 * so on a shared Postgres another test's transaction may hold it back for a moment.
 */
export async function allEvents(ctx: TestContext, project: ImportedProject, atLeast = 0, query = ""): Promise<Json[]> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const events: Json[] = [];
    let after: string | undefined;
    for (;;) {
      const params = `per_page=100${after ? `&after=${after}` : ""}${query ? `&${query}` : ""}`;
      const envelope = await expectStatus(await ctx.get(adminPath(project, `/events?${params}`), project.secretKey), 200);
      events.push(...envelope.data);
      if (envelope.data.length < 100) break;
      after = envelope.data.at(-1).id;
    }
    if (events.length >= atLeast || Date.now() > deadline) return events;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
