/**
 * The outbox's feed order (owner-api-v3.md, "Events": paging with `after` never skips an event,
 * not even one whose transaction committed after a later-numbered one) and its id format.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestContext, type TestContext } from "../../test/support/harness.ts";
import { committedEvents, eventId, eventPosition, recordEvents } from "./outbox.ts";

let ctx: TestContext;
let projectId: number;

beforeAll(async () => {
  ctx = await createTestContext();
  const { slug } = await ctx.importProject();
  projectId = (await ctx.db.selectFrom("projects").select("id").where("slug", "=", slug).executeTakeFirstOrThrow()).id;
});
afterAll(() => ctx.close());

describe("event ids", () => {
  it("round-trip to their position and sort as positions do", () => {
    const a = eventId("900", "5");
    const b = eventId("900", "6");
    const c = eventId("901", "1");
    expect(a).toMatch(/^evt_[0-9a-z]{26}$/);
    expect(eventPosition(a)).toEqual({ txid: "900", seq: "5" });
    expect([c, b, a].sort()).toEqual([a, b, c]);
    expect(eventId(2n ** 64n - 1n, 1n) > eventId(2n ** 63n, 1n)).toBe(true);
  });

  it("refuse what is not an event id", () => {
    for (const bad of ["evt_", "evt_0000000000000", `evt_${"u".repeat(26)}`, `evt_${"z".repeat(26)}`, "ev_00000000000000000000000000"]) {
      expect(eventPosition(bad), bad).toBeNull();
    }
  });
});

describe("committedEvents", () => {
  it("lists a project's events oldest first, filtered by type, and pages with after", async () => {
    await ctx.db.transaction().execute((trx) =>
      recordEvents(trx, projectId, [
        { type: "feature.created", object: { id: 1 } },
        { type: "vote.created", object: { feature_id: 1, voter_id: "v", vote_count: 1 } },
      ]),
    );
    await recordEvents(ctx.db, projectId, [{ type: "feature.updated", object: { id: 1 }, changes: { title: { from: "a", to: "b" } } }]);
    const all = await committedEvents(ctx.db, { projectId, limit: 100 });
    expect(all.map((e) => e.type)).toEqual(["feature.created", "vote.created", "feature.updated"]);
    expect(all[2]!.data).toEqual({ object: { id: 1 }, changes: { title: { from: "a", to: "b" } } });
    expect(all[0]!.data.changes).toBeNull();
    const after = await committedEvents(ctx.db, { projectId, after: eventPosition(all[0]!.id), limit: 100 });
    expect(after.map((e) => e.id)).toEqual([all[1]!.id, all[2]!.id]);
    const votes = await committedEvents(ctx.db, { projectId, types: ["vote.created"], limit: 100 });
    expect(votes.map((e) => e.id)).toEqual([all[1]!.id]);
  });

  it("orders by position as numbers, not as text (seq 9 before seq 10)", async () => {
    const events = Array.from({ length: 12 }, (_, i) => ({ type: "vote.created" as const, object: { n: i } }));
    await ctx.db.transaction().execute((trx) => recordEvents(trx, projectId, events));
    const listed = await committedEvents(ctx.db, { projectId, types: ["vote.created"], limit: 100 });
    const numbered = listed.filter((event) => typeof event.data.object.n === "number");
    expect(numbered.map((event) => event.data.object.n)).toEqual(events.map((_, i) => i));
    expect(numbered.map((event) => event.id)).toEqual(numbered.map((event) => event.id).sort());
  });
});
