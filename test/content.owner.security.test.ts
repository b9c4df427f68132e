/**
 * Owner content routes (tags, boards, columns, releases, messages) ignore identity headers
 * (owner-api-v3.md, "Common rules"). That they take the project's secret key only is checked
 * for every owner route by test/owner-routes.security.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestContext, type ImportedProject, type TestContext } from "./support/harness.ts";
import { importContentProject, owner } from "./support/owner-content.fixture.ts";

let ctx: TestContext;
let p: ImportedProject;

beforeAll(async () => {
  ctx = await createTestContext();
  p = await importContentProject(ctx);
});
afterAll(async () => {
  await ctx.close();
});

describe("owner content routes", () => {
  it("identity headers are ignored (an invalid token does not make the owner route 401)", async () => {
    const result = await owner(ctx, p, "GET", "/tags", undefined, { "X-VF-Anon": "not-a-token", "X-VF-Token": "bad.jwt.here" });
    expect(result.status).toBe(200);
    const made = await owner(ctx, p, "POST", "/tags", { name: "With identity" }, { "X-VF-Anon": "not-a-token" });
    expect(made.status).toBe(201);
  });
});
