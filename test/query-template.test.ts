/**
 * db/query-template.ts: a statement compiled once per shape runs with each call's values, a
 * different shape gets its own statement, and a missing value is refused before anything runs;
 * the visibility shape key (used by the vote and list templates) covers every setting that
 * changes the visibility SQL.
 */
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { compileOnlyDatabase } from "../db/connect.ts";
import { QueryTemplate } from "../db/query-template.ts";
import type { ProjectSettings } from "../db/schema.ts";
import { visibilityShapeKey, visibleFeatureQuery } from "../src/routes/features/index.ts";
import { createTestContext, type TestContext } from "./support/harness.ts";

let ctx: TestContext;
beforeAll(async () => {
  ctx = await createTestContext();
});
afterAll(() => ctx.close());

/** shape "plus": n + step; shape "times": n * step (different SQL text). */
const arithmetic = new QueryTemplate<"plus" | "times", { n: number; step: number }, { result: number }>(
  (shape) => shape,
  (db, shape, param) =>
    db.selectNoFrom(
      shape === "plus"
        ? sql<number>`${param("n")}::int + ${param("step")}::int`.as("result")
        : sql<number>`${param("n")}::int * ${param("step")}::int`.as("result"),
    ),
);

describe("QueryTemplate", () => {
  it("binds each call's values to the statement compiled the first time", async () => {
    expect(await arithmetic.executeTakeFirst(ctx.db, "plus", { n: 2, step: 3 })).toEqual({ result: 5 });
    expect(await arithmetic.executeTakeFirst(ctx.db, "plus", { n: 40, step: 2 })).toEqual({ result: 42 });
  });

  it("compiles a separate statement for each shape", async () => {
    expect(await arithmetic.executeTakeFirst(ctx.db, "times", { n: 6, step: 7 })).toEqual({ result: 42 });
    expect(await arithmetic.executeTakeFirst(ctx.db, "plus", { n: 6, step: 7 })).toEqual({ result: 13 });
  });

  it("refuses a call that lacks a value the statement needs", async () => {
    await expect(arithmetic.execute(ctx.db, "plus", { n: 1 } as never)).rejects.toThrow(/no value for parameter "step"/);
  });
});

describe("visibility shapes", () => {
  const compiler = compileOnlyDatabase();
  const flags = [
    "allow_comments",
    "allow_suggestions",
    "allow_voting",
    "allow_likes",
    "score_is_weighted",
    "show_archived",
    "show_comments",
    "show_denied",
    "show_progress",
    "show_views",
    "show_votes",
  ] as const;

  it("visibilityShapeKey tells apart exactly the settings that compile to different visibility statements", () => {
    // The vote and list templates cache one statement per key: settings with one key must
    // build the same statement, whatever the other settings are.
    const sqlByKey = new Map<string, string>();
    for (let bits = 0; bits < 2 ** flags.length; bits++) {
      const settings = { default_mode: "light" } as Record<string, unknown>;
      for (const [i, flag] of flags.entries()) settings[flag] = (bits & (1 << i)) !== 0;
      const compiled = visibleFeatureQuery(compiler, settings as unknown as ProjectSettings, {
        projectId: 1,
        featureId: 2,
        voterId: 3,
        allowVoting: true,
      }).compile();
      // A template keeps the constants among the parameters too ('denied', 'archived').
      const text = JSON.stringify([compiled.sql, compiled.parameters]);
      const key = visibilityShapeKey(settings as unknown as ProjectSettings);
      expect(sqlByKey.get(key) ?? text).toBe(text);
      sqlByKey.set(key, text);
    }
    expect(new Set(sqlByKey.values()).size).toBe(sqlByKey.size);
  });
});
