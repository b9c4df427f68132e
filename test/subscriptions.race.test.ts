/**
 * Subscriptions under concurrency (engagement-api-v3.md, "Subscriptions" rules 1-2; common brief:
 * nothing lost or double-counted): parallel votes, withdrawals and comments of one voter on one
 * feature leave exactly one subscription row; many voters at once each get theirs; an opt-out
 * holds against a burst of votes and comments; parallel PUTs and DELETEs of one voter all answer
 * 200 and leave one row whose state the list and the next PUT agree with.
 */
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestContext, type ImportedProject, type TestContext, uniqueSlug } from "./support/harness.ts";

let ctx: TestContext;

beforeAll(async () => {
  ctx = await createTestContext();
});
afterAll(() => ctx.close());

async function crowd(count: number): Promise<ImportedProject> {
  const slug = uniqueSlug("subrace");
  return ctx.importProject({
    project: { slug },
    voters: Array.from({ length: count }, (_, i) => ({ ref: `v${i}`, anon_token: `anon-v${i}-${slug}` })),
    features: [{ ref: "hot", board: "roadmap", column: "c-open", heading: "Hot" }],
  });
}

const hot = (project: ImportedProject): number => project.ids.ids.features.hot;

async function call(project: ImportedProject, method: string, path: string, voter: number, payload?: unknown) {
  const response = await ctx.send(method, `/api/v3/projects/${project.slug}${path}`, project.secretKey, payload, {
    "X-VF-Anon": `anon-v${voter}-${project.slug}`,
  });
  return { status: response.status, body: await response.json() };
}

const vote = (p: ImportedProject, voter: number) => call(p, "POST", `/features/${hot(p)}/vote`, voter);
const withdraw = (p: ImportedProject, voter: number) => call(p, "DELETE", `/features/${hot(p)}/vote`, voter);
const comment = (p: ImportedProject, voter: number) => call(p, "POST", `/features/${hot(p)}/comments`, voter, { content: "me too" });
const subscribe = (p: ImportedProject, voter: number) => call(p, "PUT", `/features/${hot(p)}/subscription`, voter);
const unsubscribe = (p: ImportedProject, voter: number) => call(p, "DELETE", `/features/${hot(p)}/subscription`, voter);

async function rows(project: ImportedProject) {
  const { rows } = await sql<{ voter_id: number; reason: string; opted_out: boolean }>`
    SELECT s.voter_id, s.reason, s.opted_out FROM subscriptions s WHERE s.feature_id = ${hot(project)} ORDER BY s.voter_id`.execute(ctx.db);
  return rows;
}

describe("subscriptions under concurrency", () => {
  it("parallel votes, withdrawals and comments of one voter leave exactly one subscription", async () => {
    const project = await crowd(1);
    const burst = await Promise.all(
      Array.from({ length: 24 }, (_, i) => (i % 3 === 0 ? vote(project, 0) : i % 3 === 1 ? withdraw(project, 0) : comment(project, 0))),
    );
    for (const answer of burst) expect([200, 201, 409]).toContain(answer.status);
    expect(burst.some((answer) => answer.status === 201)).toBe(true);
    const stored = await rows(project);
    expect(stored).toHaveLength(1);
    expect(stored[0]).toMatchObject({ opted_out: false });
    expect(["vote", "comment"]).toContain(stored[0]!.reason);
  });

  it("many voters voting and commenting at once each get one subscription", async () => {
    const project = await crowd(16);
    const answers = await Promise.all(
      Array.from({ length: 16 }, (_, voter) => [vote(project, voter), comment(project, voter), vote(project, voter)]).flat(),
    );
    for (const answer of answers) expect([200, 201, 409]).toContain(answer.status);
    const stored = await rows(project);
    expect(stored).toHaveLength(16);
    expect(new Set(stored.map((row) => row.voter_id)).size).toBe(16);
    expect(stored.every((row) => !row.opted_out)).toBe(true);
  });

  it("an opt-out holds against a burst of votes and comments", async () => {
    const project = await crowd(1);
    expect((await unsubscribe(project, 0)).status).toBe(200);
    const burst = await Promise.all(Array.from({ length: 12 }, (_, i) => (i % 2 === 0 ? vote(project, 0) : comment(project, 0))));
    for (const answer of burst) expect([200, 201, 409]).toContain(answer.status);
    expect(await rows(project)).toEqual([expect.objectContaining({ opted_out: true })]);
  });

  it("parallel PUTs and DELETEs all answer 200 and leave one row the list and a later PUT agree with", async () => {
    const project = await crowd(1);
    const burst = await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 === 0 ? subscribe(project, 0) : unsubscribe(project, 0))));
    for (const answer of burst) expect(answer.status).toBe(200);
    for (const answer of burst.filter((_, i) => i % 2 === 0)) expect(answer.body.data).toMatchObject({ reason: "manual" });
    const stored = await rows(project);
    expect(stored).toHaveLength(1);
    const listed = await call(project, "GET", "/subscriptions", 0);
    expect(listed.body.data).toHaveLength(stored[0]!.opted_out ? 0 : 1);

    const last = await subscribe(project, 0);
    expect(last.body.data.reason).toBe("manual");
    expect(await rows(project)).toEqual([expect.objectContaining({ opted_out: false, reason: "manual" })]);
    expect((await call(project, "GET", "/subscriptions", 0)).body.data).toHaveLength(1);
  });
});
