/** POST /projects/{slug}/messages/{id}/dismiss and how dismissals shape the message list. */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type Answer,
  body,
  createTestContext,
  type ErrorAnswer,
  type Ids,
  type ImportedProject,
  type TestContext,
} from "./support/harness.ts";

type Messages = Answer<"/api/v3/projects/{slug}/messages", "get">;
type Dismissed = Answer<"/api/v3/projects/{slug}/messages/{id}/dismiss", "post">;

let ctx: TestContext;
let p: ImportedProject;
const idsOf = (project: ImportedProject): Ids => project.ids.ids ?? project.ids;
const ADA = "anon-dismiss-token-ada-000000001";
const BOB = "anon-dismiss-token-bob-000000002";
const CY = "anon-dismiss-token-cy-0000000003";

beforeAll(async () => {
  ctx = await createTestContext();
  p = await ctx.importProject({
    voters: [
      { ref: "ada", anon_token: ADA },
      { ref: "bob", anon_token: BOB },
      { ref: "cy", anon_token: CY, banned: true },
    ],
    messages: [
      { ref: "m1", title: "One", body: "1", priority: 3 },
      { ref: "m2", title: "Two", body: "2", priority: 2 },
      { ref: "sticky", title: "Sticky", body: "s", priority: 1, is_dismissible: false },
      { ref: "pre", title: "Pre", body: "p", priority: 0 },
    ],
    dismissals: [{ voter: "bob", message: "pre" }],
  });
});
afterAll(async () => {
  await ctx.close();
});

const dismiss = (id: number, headers: Record<string, string> = { "X-VF-Anon": ADA }, key = p.secretKey, slug = p.slug) =>
  ctx.send("POST", `/api/v3/projects/${slug}/messages/${id}/dismiss`, key, undefined, headers);

async function titles(headers: Record<string, string> = {}): Promise<string[]> {
  const response = await ctx.get(`/api/v3/projects/${p.slug}/messages`, p.secretKey, headers);
  expect(response.status).toBe(200);
  return (await body<Messages>(response)).data.map((m) => m.title);
}

describe("dismiss", () => {
  it("dismisses for this voter only, and a repeat is still 200", async () => {
    const id = idsOf(p).messages.m1!;
    expect(await titles({ "X-VF-Anon": ADA })).toEqual(["One", "Two", "Sticky", "Pre"]);
    const first = await dismiss(id);
    expect(first.status).toBe(200);
    expect(await body<Dismissed>(first)).toEqual({ data: { dismissed: true, message_id: id }, meta: null, error: null });
    const again = await dismiss(id);
    expect(again.status).toBe(200);
    expect(await body<Dismissed>(again)).toEqual({ data: { dismissed: true, message_id: id }, meta: null, error: null });
    expect(await titles({ "X-VF-Anon": ADA })).toEqual(["Two", "Sticky", "Pre"]);
    expect(await titles({ "X-VF-Anon": ADA })).toEqual(["Two", "Sticky", "Pre"]);
    expect(await titles({ "X-VF-Anon": BOB })).toEqual(["One", "Two", "Sticky"]);
    expect(await titles()).toEqual(["One", "Two", "Sticky", "Pre"]);
  });

  it("works with the embed key and for a banned voter", async () => {
    const id = idsOf(p).messages.m2!;
    const response = await dismiss(id, { "X-VF-Anon": CY }, p.embedKey);
    expect(response.status).toBe(200);
    expect(await titles({ "X-VF-Anon": CY })).not.toContain("Two");
  });

  it("answers 403 not_allowed for a message that is not dismissible", async () => {
    const response = await dismiss(idsOf(p).messages.sticky!);
    expect(response.status).toBe(403);
    expect(await body<ErrorAnswer>(response)).toEqual({
      data: null,
      meta: null,
      error: { code: "not_allowed", field: null, message: expect.any(String) },
    });
    expect(await titles({ "X-VF-Anon": ADA })).toContain("Sticky");
  });

  it("answers 404 for an unknown message and another project's message", async () => {
    const other = await ctx.importProject({ messages: [{ ref: "x", title: "X", body: "x" }] });
    for (const id of [idsOf(other).messages.x!, 99_999_999]) {
      const response = await dismiss(id);
      expect(response.status).toBe(404);
      expect((await body<ErrorAnswer>(response)).error).toMatchObject({ code: "not_found", field: null });
    }
  });

  it("answers 401 identity_required without identity and identity_invalid for an unknown token", async () => {
    const id = idsOf(p).messages.m2!;
    const none = await dismiss(id, {});
    expect(none.status).toBe(401);
    expect((await body<ErrorAnswer>(none)).error.code).toBe("identity_required");
    const bad = await dismiss(id, { "X-VF-Anon": "anon-nobody-has-this-token-00000" });
    expect(bad.status).toBe(401);
    expect((await body<ErrorAnswer>(bad)).error.code).toBe("identity_invalid");
  });

  it("answers 422 field id for a non-numeric id and key_wrong_project with a foreign key", async () => {
    const badId = await ctx.send("POST", `/api/v3/projects/${p.slug}/messages/abc/dismiss`, p.secretKey, undefined, { "X-VF-Anon": ADA });
    expect(badId.status).toBe(422);
    expect((await body<ErrorAnswer>(badId)).error).toMatchObject({ code: "validation_failed", field: "id" });
    const other = await ctx.importProject({});
    const foreign = await dismiss(idsOf(p).messages.m2!, { "X-VF-Anon": ADA }, other.secretKey);
    expect(foreign.status).toBe(403);
    expect((await body<ErrorAnswer>(foreign)).error.code).toBe("key_wrong_project");
  });

  it("answers 405 for GET on the dismiss path", async () => {
    const response = await ctx.get(`/api/v3/projects/${p.slug}/messages/${idsOf(p).messages.m2}/dismiss`, p.secretKey);
    expect(response.status).toBe(405);
  });
});
