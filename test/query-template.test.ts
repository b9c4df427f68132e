/**
 * db/query-template.ts: a statement compiled once per shape runs with each call's values, a
 * different shape gets its own statement, and a missing value is refused before anything runs.
 */
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { QueryTemplate } from "../db/query-template.ts";
import { createTestContext, type TestContext } from "./harness.ts";

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
