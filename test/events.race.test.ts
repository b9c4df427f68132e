/**
 * Vote events under concurrency (owner-api-v3.md, "Events": no change without its event, no
 * event without its change): hundreds of racing votes and withdrawals, then per (feature, voter)
 * vote.created minus vote.deleted equals the vote rows, the events of a feature step vote_count
 * by exactly one each in insertion order ending at the stored count, and each milestone reached
 * is announced exactly once.
 */
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { milestoneAtOrBelow } from "../src/events/milestones.ts";
import { eventPosition } from "../src/events/outbox.ts";
import { allEvents } from "./support/events.fixture.ts";
import { createTestContext, type ImportedProject, type SnapshotParts, type TestContext, uniqueSlug } from "./support/harness.ts";

let ctx: TestContext;

beforeAll(async () => {
  ctx = await createTestContext();
});
afterAll(() => ctx.close());

const VOTERS = 40;
const REQUESTS = 600;

function crowd(): SnapshotParts {
  const slug = uniqueSlug("evrace");
  return {
    project: { slug },
    voters: Array.from({ length: VOTERS }, (_, i) => ({ ref: `v${i}`, anon_token: `anon-v${i}-${slug}` })),
    features: ["a", "b"].map((ref) => ({ ref, board: "roadmap", column: "c-planned", heading: ref })),
    // Feature a starts one vote short of 10, so the milestone is crossed and recrossed in the race.
    votes: Array.from({ length: 9 }, (_, i) => ({ voter: `v${i}`, feature: "a" })),
  };
}

/** A deterministic mix of votes and withdrawals (xorshift), most of them on voters 0..19 of feature a. */
function plan(count: number): { method: "POST" | "DELETE"; voter: number; feature: "a" | "b" }[] {
  let state = 0x9e3779b9;
  const next = () => {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    return (state >>> 0) / 2 ** 32;
  };
  return Array.from({ length: count }, () => ({
    method: next() < 0.6 ? "POST" : "DELETE",
    voter: Math.floor(next() * (next() < 0.7 ? 20 : VOTERS)),
    feature: next() < 0.75 ? "a" : "b",
  }));
}

describe("racing votes and withdrawals", () => {
  it("record exactly one event per vote row change, in a per-feature insertion order that matches the counts", async () => {
    const project: ImportedProject = await ctx.importProject(crowd());
    const features = project.ids.ids.features as Record<string, number>;
    const voters = project.ids.ids.voters as Record<string, string>;
    const statuses = await Promise.all(
      plan(REQUESTS).map(({ method, voter, feature }) =>
        ctx
          .send(method, `/api/v3/projects/${project.slug}/features/${features[feature]}/vote`, project.secretKey, undefined, {
            "X-VF-Anon": `anon-v${voter}-${project.slug}`,
          })
          .then((response) => response.status),
      ),
    );
    expect(statuses.every((status) => status === 200 || status === 409)).toBe(true);
    const changed = statuses.filter((status) => status === 200).length;

    const { rows } = await sql<{ feature_id: number; voter_id: string }>`SELECT v.feature_id, r.public_id AS voter_id
      FROM votes v JOIN voters r ON r.id = v.voter_id JOIN projects p ON p.id = v.project_id WHERE p.slug = ${project.slug}`.execute(
      ctx.db,
    );
    const events = await allEvents(ctx, project, changed);
    expect(events.filter((event) => event.type === "vote.created" || event.type === "vote.deleted")).toHaveLength(changed);
    // The feed orders by (transaction id, insertion number); concurrent transactions on one
    // feature may list in another order than they took its row lock (a statement can be given its
    // transaction id before it waits). The insertion number (seq) is taken under the feature's
    // row lock, so per feature it is the order of the changes: the checks below follow it.
    const { rows: inserted } = await sql<{ seq: string }>`SELECT e.seq::text AS seq FROM events e
      JOIN projects p ON p.id = e.project_id WHERE p.slug = ${project.slug} ORDER BY e.seq`.execute(ctx.db);
    expect(inserted).toHaveLength(events.length);
    const bySeq = [...events].sort((a, b) => Number(eventPosition(a.id)!.seq) - Number(eventPosition(b.id)!.seq));
    const voteEvents = bySeq.filter((event) => event.type === "vote.created" || event.type === "vote.deleted");

    // Per (feature, voter): created and deleted alternate, starting from the imported state, and
    // what is left equals the vote rows.
    const imported = new Set(Array.from({ length: 9 }, (_, i) => `${features.a}/${voters[`v${i}`]}`));
    const net = new Map<string, number>();
    for (const event of voteEvents) {
      const key = `${event.data.object.feature_id}/${event.data.object.voter_id}`;
      const had = net.get(key) ?? (imported.has(key) ? 1 : 0);
      expect(had, key).toBe(event.type === "vote.created" ? 0 : 1);
      net.set(key, had + (event.type === "vote.created" ? 1 : -1));
    }
    const stored = new Set(rows.map((row) => `${row.feature_id}/${row.voter_id}`));
    for (const key of new Set([...net.keys(), ...stored, ...imported])) {
      expect(net.get(key) ?? (imported.has(key) ? 1 : 0), key).toBe(stored.has(key) ? 1 : 0);
    }

    // Per feature: each event moves vote_count by one from the one before; the last is the stored count.
    for (const [ref, id] of Object.entries(features)) {
      let count = ref === "a" ? 9 : 0;
      let highest = count;
      for (const event of voteEvents.filter((e) => e.data.object.feature_id === id)) {
        count += event.type === "vote.created" ? 1 : -1;
        expect(event.data.object.vote_count).toBe(count);
        highest = Math.max(highest, count);
      }
      const stored = await sql<{ vote_count: number }>`SELECT vote_count FROM features WHERE id = ${id}`.execute(ctx.db);
      expect(stored.rows[0]!.vote_count).toBe(count);
      const milestones = bySeq
        .filter((event) => event.type === "feature.vote_milestone" && event.data.object.id === id)
        .map((event) => event.data.changes.vote_count.to);
      const expected = [10, 25].filter((threshold) => threshold <= highest && threshold > milestoneAtOrBelow(ref === "a" ? 9 : 0));
      expect(milestones, ref).toEqual(expected);
    }
  });
});
