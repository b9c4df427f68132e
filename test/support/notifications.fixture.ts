/**
 * Fixture of the notification tests (engagement-api-v3.md, "Notifications (in-app inbox)"): a
 * project whose subscriptions are written directly in SQL (the rows the subscription routes and
 * auto-subscribe make), the consumer run until it has passed the project's last event, and the
 * inbox rows read back.
 *
 * Voters (anonymous, tokens in `tokens`): ada, bob, cy, dan (plain), ed (role editor), olga (role
 * owner), ban (banned). Features: f1, f2, f3 (planned, public), dup (planned, to merge into f1),
 * hidden (denied; not public: show_denied is false), f1..f3 by nobody. Comment c1 by ada on f1.
 * Settings: show_denied and show_archived false.
 */
import { randomBytes } from "node:crypto";
import { sql } from "kysely";
import { expect } from "vitest";
import type { Db } from "../../db/connect.ts";
import { consumePendingNotifications } from "../../src/events/notification-consumer.ts";
import { body, type ImportedProject, type Json, type TestContext } from "./harness.ts";

export const VOTER_REFS = ["ada", "bob", "cy", "dan", "ed", "olga", "ban"] as const;
export type VoterRef = (typeof VOTER_REFS)[number];

export interface NotifyProject extends ImportedProject {
  id: number;
  tokens: Record<VoterRef, string>;
  /** Internal voter ids by ref. */
  voters: Record<VoterRef, number>;
  features: Record<string, number>;
}

/** Imports a fresh notifications project through `ctx`. */
export async function importNotifyProject(ctx: Pick<TestContext, "importProject" | "db">): Promise<NotifyProject> {
  const tokens = Object.fromEntries(VOTER_REFS.map((ref) => [ref, `anon_${randomBytes(18).toString("base64url")}`])) as Record<
    VoterRef,
    string
  >;
  const project = await ctx.importProject({
    project: {
      settings: {
        allow_comments: true,
        allow_suggestions: true,
        allow_voting: true,
        allow_likes: true,
        default_mode: "roadmap",
        score_is_weighted: false,
        show_archived: false,
        show_comments: true,
        show_denied: false,
        show_progress: true,
        show_views: true,
        show_votes: true,
      },
    },
    voters: VOTER_REFS.map((ref) => ({
      ref,
      kind: "anonymous",
      anon_token: tokens[ref],
      display_name: ref[0]!.toUpperCase() + ref.slice(1),
      role: ref === "ed" ? "editor" : ref === "olga" ? "owner" : null,
      banned: ref === "ban",
    })),
    features: [
      { ref: "f1", board: "roadmap", column: "c-planned", heading: "First" },
      { ref: "f2", board: "roadmap", column: "c-planned", heading: "Second" },
      { ref: "f3", board: "roadmap", column: "c-planned", heading: "Third" },
      { ref: "dup", board: "roadmap", column: "c-planned", heading: "Duplicate of first" },
      { ref: "hidden", board: "roadmap", column: "c-denied", heading: "Declined one" },
    ],
    comments: [{ ref: "c1", feature: "f1", voter: "ada", content: "Please do this" }],
  });
  const projectRow = await ctx.db.selectFrom("projects").select("id").where("slug", "=", project.slug).executeTakeFirstOrThrow();
  const voterRows = await ctx.db.selectFrom("voters").select(["id", "public_id"]).where("project_id", "=", projectRow.id).execute();
  const byPublic = new Map(voterRows.map((row) => [row.public_id, row.id]));
  const voters = Object.fromEntries(VOTER_REFS.map((ref) => [ref, byPublic.get(project.ids.ids.voters[ref])!])) as Record<VoterRef, number>;
  return { ...project, id: projectRow.id, tokens, voters, features: project.ids.ids.features };
}

/** Subscribes `voters` to feature `featureId` (rows as the subscription routes write them). */
export async function subscribe(
  db: Db,
  project: Pick<NotifyProject, "id">,
  featureId: number,
  voters: number[],
  options: { optedOut?: boolean } = {},
): Promise<void> {
  if (voters.length === 0) return;
  await db
    .insertInto("subscriptions")
    .values(
      voters.map((voterId) => ({
        feature_id: featureId,
        voter_id: voterId,
        project_id: project.id,
        reason: "manual" as const,
        opted_out: options.optedOut ?? false,
      })),
    )
    .onConflict((oc) => oc.columns(["feature_id", "voter_id"]).doUpdateSet({ opted_out: options.optedOut ?? false }))
    .execute();
}

/**
 * Runs the consumer until its cursor has passed the project's last event (another test file's
 * process or a server may be consuming at the same time: then this waits for it).
 */
export async function drainNotifications(db: Db, projectId: number): Promise<void> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const last = await db
      .selectFrom("events")
      .select([sql<string>`txid::text`.as("txid"), sql<string>`seq::text`.as("seq")])
      .where("project_id", "=", projectId)
      .orderBy("events.txid", "desc")
      .orderBy("events.seq", "desc")
      .limit(1)
      .executeTakeFirst();
    if (!last) return;
    await consumePendingNotifications(db);
    const { rows } = await sql<{ passed: boolean }>`
      SELECT (txid, seq) >= (${last.txid}::xid8, ${last.seq}::bigint) AS passed FROM notification_cursor WHERE id = 1`.execute(db);
    if (rows[0]?.passed) return;
    if (Date.now() > deadline) throw new Error("the notification consumer did not pass the project's last event");
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

export interface StoredNotification {
  voter_id: number;
  feature_id: number;
  type: string;
  data: Json;
  event_seq: string;
}

/** Every notification of the project, in insertion order. */
export async function notificationsOf(db: Db, projectId: number): Promise<StoredNotification[]> {
  const rows = await db
    .selectFrom("notifications")
    .select(["voter_id", "feature_id", "type", "data", "event_seq"])
    .where("project_id", "=", projectId)
    .orderBy("id")
    .execute();
  return rows.map((row) => ({ ...row, data: typeof row.data === "string" ? JSON.parse(row.data) : row.data }));
}

/** The voters (refs, sorted) that hold a notification of `type` among `rows`. */
export function recipients(project: NotifyProject, rows: StoredNotification[], type: string): VoterRef[] {
  const byId = new Map(VOTER_REFS.map((ref) => [project.voters[ref], ref]));
  return rows
    .filter((row) => row.type === type)
    .map((row) => byId.get(row.voter_id)!)
    .sort();
}

export const adminPath = (project: ImportedProject, path: string) => `/api/v3/projects/${project.slug}/admin${path}`;
export const publicPath = (project: ImportedProject, path: string) => `/api/v3/projects/${project.slug}${path}`;

/** The envelope of `response`, asserting its status. */
export async function expectStatus(response: Response, status: number): Promise<Json> {
  const envelope = await body(response);
  expect(response.status, JSON.stringify(envelope)).toBe(status);
  return envelope;
}

/** An owner write through the app, asserting a 2xx answer; its envelope. */
export async function ownerWrite(ctx: TestContext, project: NotifyProject, method: string, path: string, payload?: unknown): Promise<Json> {
  const response = await ctx.send(method, adminPath(project, path), project.secretKey, payload);
  const envelope = await body(response);
  expect(response.status, JSON.stringify(envelope)).toBeLessThan(300);
  return envelope;
}

/** A voter's write through the app, asserting a 2xx answer; its envelope. */
export async function voterWrite(
  ctx: TestContext,
  project: NotifyProject,
  voter: VoterRef,
  method: string,
  path: string,
  payload?: unknown,
): Promise<Json> {
  const response = await ctx.send(method, publicPath(project, path), project.secretKey, payload, { "X-VF-Anon": project.tokens[voter] });
  const envelope = await body(response);
  expect(response.status, JSON.stringify(envelope)).toBeLessThan(300);
  return envelope;
}
