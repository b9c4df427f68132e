/**
 * Shared pieces of the owner content tests (tags, boards and columns, messages, releases): the
 * admin path of a project, a JSON-reading request helper and a snapshot with tags, a custom
 * board and features to attach them to. Each test file imports its own projects (unique slugs).
 */
import { expect } from "vitest";
import type { SnapshotInput } from "../../src/admin/snapshot.schema.ts";
import { body, type ImportedProject, type Json, type OwnerErrorAnswer, type SnapshotParts, type TestContext } from "./harness.ts";

/** contentSnapshot's parts: snapshot sections, and the custom board to add after the roadmap. */
export type ContentParts = Required<Pick<SnapshotInput, "tags" | "voters" | "features" | "votes">> & {
  extraBoards: NonNullable<SnapshotInput["boards"]>;
};

export const idsOf = (project: ImportedProject): Json => project.ids.ids ?? project.ids;

/** `/api/v3/projects/{slug}/admin{path}`. */
export const adminPath = (project: ImportedProject, path: string) => `/api/v3/projects/${project.slug}/admin${path}`;
export const publicPath = (project: ImportedProject, path = "") => `/api/v3/projects/${project.slug}${path}`;

/** Sends an owner request with the project's secret key; returns status and parsed envelope. */
export async function owner(
  ctx: TestContext,
  project: ImportedProject,
  method: string,
  path: string,
  payload?: unknown,
  headers: Record<string, string> = {},
) {
  const response =
    method === "GET"
      ? await ctx.get(adminPath(project, path), project.secretKey, headers)
      : await ctx.send(method, adminPath(project, path), project.secretKey, payload, headers);
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: (text ? JSON.parse(text) : null) as Json };
}

/** A public read with the secret key: the parsed envelope (status asserted 200). */
export async function publicRead(ctx: TestContext, project: ImportedProject, path = ""): Promise<Json> {
  const response = await ctx.get(publicPath(project, path), project.secretKey);
  expect(response.status).toBe(200);
  return body(response);
}

/** Asserts a 422 validation_failed naming `field`. */
export function expectInvalid(result: { status: number; body: unknown }, field: string): void {
  expect(result.status, JSON.stringify(result.body)).toBe(422);
  // A 422 answer is the owner error envelope; what it holds is what is checked.
  const envelope = result.body as OwnerErrorAnswer;
  expect(envelope.error).toMatchObject({ code: "validation_failed", field });
  expect(envelope.data).toBeNull();
}

/** Snapshot parts: three tags, a custom board "mobile" with two columns, features on both boards. */
export function contentSnapshot(): ContentParts {
  return {
    tags: [
      { ref: "t-ui", name: "UI" },
      { ref: "t-api", name: "API" },
      { ref: "t-empty", name: "Empty" },
    ],
    voters: [
      { ref: "ada", display_name: "Ada" },
      { ref: "bob", display_name: "Bob" },
    ],
    extraBoards: [
      {
        ref: "mobile",
        kind: "custom",
        name: "Mobile",
        slug: "mobile",
        columns: [
          { ref: "m-later", name: "Later", color: null, position: 0, is_votable: true },
          { ref: "m-now", name: "Now", color: "#112233", position: 1, is_votable: true },
        ],
      },
    ],
    features: [
      { ref: "dark", board: "roadmap", column: "c-planned", heading: "Dark mode", tags: ["t-ui", "t-api"] },
      { ref: "export", board: "roadmap", column: "c-planned", heading: "CSV export", tags: ["t-ui"] },
      { ref: "widget", board: "mobile", column: "m-later", heading: "Widget" },
      { ref: "pending", board: "roadmap", column: "c-open", heading: "Awaiting review", is_approved: false },
    ],
    votes: [
      { voter: "ada", feature: "dark" },
      { voter: "bob", feature: "dark" },
      { voter: "ada", feature: "widget" },
    ],
  };
}

/** Imports contentSnapshot() (with the harness's roadmap plus the custom board) and `extra` over it. */
export async function importContentProject(ctx: TestContext, extra: SnapshotParts = {}): Promise<ImportedProject> {
  const { extraBoards, ...parts } = contentSnapshot();
  const { buildSnapshot } = await import("./harness.ts");
  const roadmap = buildSnapshot().boards;
  return ctx.importProject({ ...parts, boards: [...roadmap, ...extraBoards], ...extra });
}
