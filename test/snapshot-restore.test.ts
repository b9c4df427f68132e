/**
 * Export -> `import --replace` is a restore (snapshot spec, "Restores"): after replacing a project
 * with its own export, the same keys and X-VF-Anon tokens work (the file's and those the API
 * minted), the same feature and comment ids answer, and every counter equals the export's.
 * Webhooks and merges (spec, "Webhooks, merges and engagement"): the restored webhooks are the
 * same objects and their deliveries verify with the secrets receivers already hold; a merge
 * restored can be unmerged exactly (owner Rule 2).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { exportSnapshot } from "../src/admin/snapshot-export.ts";
import { importSnapshot } from "../src/admin/snapshot-import.ts";
import { WebhookWorker } from "../src/events/webhook-worker.ts";
import {
  type Answer,
  body,
  createTestContext,
  type ImportedProject,
  type Schemas,
  type TestContext,
  uniqueSlug,
} from "./support/harness.ts";
import { counterProblems, expectStatus } from "./support/owner-accounts.fixture.ts";
import { startWebhookReceiver, type WebhookReceiver } from "./support/webhook-receiver.ts";

let ctx: TestContext;
let project: ImportedProject;
let receiver: WebhookReceiver;
let worker: WebhookWorker;

beforeAll(async () => {
  ctx = await createTestContext({ WEBHOOK_ALLOW_PRIVATE_URLS: "true", WEBHOOK_POLL_INTERVAL_MS: "50" });
  receiver = await startWebhookReceiver();
  worker = new WebhookWorker({ db: ctx.db, config: ctx.deps.config, logger: ctx.deps.logger });
  await worker.start();
  const slug = uniqueSlug("restore");
  project = await ctx.importProject({
    project: { slug },
    voters: [
      { ref: "ada", anon_token: `anon-ada-${slug}` },
      { ref: "bob", anon_token: `anon-bob-${slug}` },
    ],
    features: [
      { ref: "open", board: "roadmap", column: "c-open", heading: "Open" },
      { ref: "planned", board: "roadmap", column: "c-planned", heading: "Planned" },
    ],
  });
});
afterAll(async () => {
  await worker?.stop(0);
  await receiver?.close();
  await ctx?.close();
});

const base = () => `/api/v3/projects/${project.slug}`;
const feature = (ref: string): number => project.ids.ids.features[ref];

async function send(method: string, path: string, anon: string, body?: unknown) {
  const response = await ctx.send(method, `${base()}${path}`, project.secretKey, body, { "X-VF-Anon": anon });
  return { status: response.status, body: (await response.json()) as { data: { id: number } & Record<string, unknown> } };
}

/** What a restore must give back: the features with their counters, a feature's comments, a voter's identity. */
async function state(anon: string) {
  const features = await ctx.get(`${base()}/features?scope=project&sort=top&per_page=100`, project.secretKey);
  const comments = await ctx.get(`${base()}/features/${feature("open")}/comments?per_page=100`, project.embedKey);
  const identity = await send("POST", "/identity", anon);
  expect([features.status, comments.status, identity.status]).toEqual([200, 200, 200]);
  return {
    features: (await body<Answer<"/api/v3/projects/{slug}/features", "get">>(features)).data,
    comments: (await body<Answer<"/api/v3/projects/{slug}/features/{id}/comments", "get">>(comments)).data,
    identity: identity.body.data,
  };
}

describe("export -> import --replace", () => {
  it("restores ids, keys, anonymous tokens and counters, and the API answers as before", async () => {
    const ada = `anon-ada-${project.slug}`;
    // A voter the API minted (its token exists nowhere but in this test and as a digest).
    const minted = await ctx.send("POST", `${base()}/identity`, project.secretKey);
    expect(minted.status).toBe(201);
    const cy = (await minted.json()).data.anon_token as string;

    expect((await send("POST", `/features/${feature("open")}/vote`, ada)).status).toBe(200);
    expect((await send("POST", `/features/${feature("open")}/vote`, cy)).status).toBe(200);
    const comment = await send("POST", `/features/${feature("open")}/comments`, cy, { content: "Please" });
    expect(comment.status).toBe(201);
    expect((await send("POST", `/comments/${comment.body.data.id}/like`, ada)).status).toBe(200);

    const exported = JSON.parse(JSON.stringify(await exportSnapshot(ctx.db, project.slug)));
    const before = await state(cy);

    // Changes after the export are undone by the restore.
    expect((await send("POST", `/features/${feature("planned")}/vote`, cy)).status).toBe(200);
    expect((await send("DELETE", `/comments/${comment.body.data.id}`, cy)).status).toBe(200);

    await importSnapshot(ctx.db, exported, { replace: true });
    const after = await state(cy);
    expect(after).toEqual(before);
    expect(after.features.find((f) => f.id === feature("open"))).toMatchObject({ vote_count: 2 });
    expect(after.comments.map((c) => c.id)).toEqual([comment.body.data.id]);

    // The file's token, the minted one and both keys still work for writes.
    expect((await send("DELETE", `/features/${feature("open")}/vote`, ada)).status).toBe(200);
    expect((await send("POST", `/features/${feature("planned")}/vote`, cy)).status).toBe(200);
    const embedWrite = await ctx.send("POST", `${base()}/features/${feature("open")}/vote`, project.embedKey, undefined, {
      "X-VF-Anon": ada,
      Origin: "https://allowed.example",
    });
    expect(embedWrite.status).toBe(200);
  });
});

/** A restore as `npm run admin -- import --replace` makes it on a configuration that allows http webhooks. */
async function restore(exported: unknown) {
  await importSnapshot(ctx.db, JSON.parse(JSON.stringify(exported)), { replace: true, allowPrivateWebhookUrls: true });
}

/** A webhook create body: the document lists the defaulted fields as present; a client may leave them out. */
type WebhookFields = Pick<Schemas["CreateWebhookBody"], "url"> & Partial<Schemas["CreateWebhookBody"]>;

const admin = (p: ImportedProject, path: string) => `/api/v3/projects/${p.slug}/admin${path}`;

describe("export -> import --replace with webhooks", () => {
  it("keeps every webhook (id, url, events, enabled, disabled_reason, secret) and its deliveries verify with the old secrets", async () => {
    const slug = uniqueSlug("restore-hooks");
    const p = await ctx.importProject({
      project: { slug },
      voters: [{ ref: "ada", anon_token: `anon-ada-${slug}` }],
      features: [{ ref: "f", board: "roadmap", column: "c-open", heading: "F" }],
    });
    const create = async (body: WebhookFields) =>
      (await expectStatus(await ctx.send("POST", admin(p, "/webhooks"), p.secretKey, body), 201)).data;
    const votes = await create({ url: `${receiver.url}/${slug}/votes`, events: ["vote.created"], description: "votes only" });
    const rotated = await create({ url: `${receiver.url}/${slug}/rotated` });
    const rotation = await expectStatus(await ctx.send("POST", admin(p, `/webhooks/${rotated.id}/rotate-secret`), p.secretKey), 200);
    const paused = await create({ url: `${receiver.url}/${slug}/paused` });
    await expectStatus(await ctx.send("PATCH", admin(p, `/webhooks/${paused.id}`), p.secretKey, { enabled: false }), 200);
    const gone = await create({ url: `${receiver.url}/${slug}/gone` });
    // As a 410 answer leaves it (owner-api-v3.md, "Webhooks").
    await ctx.db.updateTable("webhooks").set({ enabled: false, disabled_reason: "gone" }).where("id", "=", gone.id).execute();
    const list = async () => (await expectStatus(await ctx.get(admin(p, "/webhooks?per_page=100"), p.secretKey), 200)).data;
    const before = await list();
    expect(before.map((w: Schemas["WebhookObject"]) => w.id)).toEqual([votes.id, rotated.id, paused.id, gone.id]);

    const exported = await exportSnapshot(ctx.db, p.slug);
    // Changed after the export: the restore takes it back.
    await expectStatus(await ctx.send("DELETE", admin(p, `/webhooks/${votes.id}`), p.secretKey), 200);
    await expectStatus(await ctx.send("PATCH", admin(p, `/webhooks/${rotated.id}`), p.secretKey, { url: "http://127.0.0.1:9/x" }), 200);
    await restore(exported);

    expect(await list()).toEqual(before);
    const stored = await ctx.db
      .selectFrom("webhooks")
      .select(["id", "secret", "previous_secret", "consecutive_failures"])
      .where("id", "in", [votes.id, rotated.id])
      .orderBy("id")
      .execute();
    expect(stored).toEqual([
      { id: votes.id, secret: votes.secret, previous_secret: null, consecutive_failures: 0 },
      { id: rotated.id, secret: rotation.data.secret, previous_secret: rotated.secret, consecutive_failures: 0 },
    ]);

    // Receivers know the secrets they were given before the restore; the rotated webhook's
    // receiver has not taken the new one yet (the 24 h overlap).
    receiver.trust(votes.secret);
    receiver.trust(rotated.secret);
    const vote = await ctx.send("POST", `/api/v3/projects/${p.slug}/features/${p.ids.ids.features.f}/vote`, p.secretKey, undefined, {
      "X-VF-Anon": `anon-ada-${slug}`,
    });
    expect(vote.status).toBe(200);
    await receiver.waitFor(() => receiver.on(`/${slug}/votes`).length >= 1 && receiver.on(`/${slug}/rotated`).length >= 1, 15_000);
    const [toVotes] = receiver.on(`/${slug}/votes`);
    expect(toVotes!.payload.type).toBe("vote.created");
    expect(toVotes!.verifiedBy).toEqual([votes.secret]);
    const toRotated = receiver.on(`/${slug}/rotated`);
    expect(toRotated.every((r) => r.verifiedBy.includes(rotated.secret))).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(receiver.on(`/${slug}/paused`)).toEqual([]);
    expect(receiver.on(`/${slug}/gone`)).toEqual([]);
  }, 30_000);
});

describe("export -> import --replace with a merged feature", () => {
  it("restores the merge, and unmerging it afterwards puts every vote back exactly as before the merge", async () => {
    const slug = uniqueSlug("restore-merge");
    const at = (day: number) => new Date(Date.UTC(2026, 9, day, 12)).toISOString();
    const p = await ctx.importProject({
      project: { slug },
      tiers: [{ ref: "pro", name: "Pro", mrr_cents: 4900, multiplier: 3 }],
      voters: [{ ref: "only-dup" }, { ref: "dup-first", tier: "pro" }, { ref: "target-first" }, { ref: "only-target" }],
      features: [
        { ref: "dup", board: "roadmap", column: "c-planned", heading: "Duplicate" },
        { ref: "target", board: "roadmap", column: "c-open", heading: "Target" },
      ],
      votes: [
        { voter: "only-dup", feature: "dup", created_at: at(1) },
        { voter: "dup-first", feature: "dup", created_at: at(2) },
        { voter: "dup-first", feature: "target", created_at: at(5) },
        { voter: "target-first", feature: "target", created_at: at(3) },
        { voter: "target-first", feature: "dup", created_at: at(6) },
        { voter: "only-target", feature: "target", created_at: at(4) },
      ],
    });
    const [dup, target] = [p.ids.ids.features.dup, p.ids.ids.features.target];
    const projectRow = await ctx.db.selectFrom("projects").select("id").where("slug", "=", slug).executeTakeFirstOrThrow();
    /** What an unmerge must give back: both features as the owner sees them, every vote with its weight and time, voters' counts. */
    const state = async () => {
      const feature = async (id: number) => {
        const { updated_at: _updated, ...rest } = (await expectStatus(await ctx.get(admin(p, `/features/${id}`), p.secretKey), 200)).data;
        return rest;
      };
      const votes = await ctx.db
        .selectFrom("votes")
        .select(["feature_id", "voter_id", "weight", "created_at"])
        .where("project_id", "=", projectRow.id)
        .orderBy("feature_id")
        .orderBy("voter_id")
        .execute();
      const voters = await ctx.db
        .selectFrom("voters")
        .select(["id", "vote_count"])
        .where("project_id", "=", projectRow.id)
        .orderBy("id")
        .execute();
      const board = (await expectStatus(await ctx.get(`/api/v3/projects/${slug}`, p.secretKey), 200)).data;
      return { dup: await feature(dup), target: await feature(target), votes, voters, voterCount: board.project.voter_count };
    };
    const beforeMerge = await state();
    expect(beforeMerge.target.vote_count).toBe(3);

    await expectStatus(await ctx.send("POST", admin(p, `/features/${dup}/merge`), p.secretKey, { into_id: target }), 200);
    const merged = await state();
    expect(merged.dup.merged_into).toMatchObject({ id: target });
    expect(merged.target.vote_count).toBe(4);

    const exported = await exportSnapshot(ctx.db, slug);
    expect(exported.features.find((f) => f.id === dup)!.merge).toMatchObject({
      into: `feature-${target}`,
      previous_status: "planned",
      moved_voters: [expect.any(String)],
      kept_voters: [expect.any(String), expect.any(String)],
    });
    await restore(exported);
    expect(await state()).toEqual(merged);

    await expectStatus(await ctx.send("POST", admin(p, `/features/${dup}/unmerge`), p.secretKey), 200);
    expect(await state()).toEqual(beforeMerge);
    expect(await counterProblems(ctx.db, slug)).toEqual([]);
  });
});
