/**
 * `import --replace` of an export under load (snapshot spec, "Restores"): the admin command line
 * replaces a project with its own export several times while reads, votes, withdrawals, comments,
 * likes and identity mints run against the server child (Postgres + Redis). Every answer is one
 * the contract allows (never a 5xx, never a dropped request), every replace ends, the counters
 * stay exact, and after the last replace the project equals the export and answers to the same
 * keys, tokens and ids. Also: the command's stdout stays the id map alone while a long import
 * reports progress on stderr.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { exportSnapshot } from "../../src/admin/snapshot-export.ts";
import { buildSnapshot } from "../support/harness.ts";
import { type AdminRun, runAdmin } from "./support/admin.ts";
import { type HttpRequest, json, send, startLoad } from "./support/http.ts";
import { counterMismatches } from "./support/invariants.ts";
import { trackTempDir } from "./support/processes.ts";
import { anonVoters, idsOf, importVotingProject, openFeatures } from "./support/seed.ts";
import { type Stack, startStack } from "./support/stack.ts";
import { acceptable, describeFailures, mixedWorkload, type WorkloadProject } from "./support/workload.ts";

let stack: Stack;
let project: WorkloadProject;
let commentId: number;
let dir: string;

beforeAll(async () => {
  stack = await startStack({ env: { RATE_LIMIT_READS_PER_MINUTE: "100000", RATE_LIMIT_WRITES_PER_MINUTE: "100000" } });
  project = await importVotingProject(stack.seeder, 40, 6, {
    comments: [{ ref: "c", feature: "f0", voter: "v0", content: "Like me" }],
    votes: [
      { voter: "v1", feature: "f0" },
      { voter: "v2", feature: "f1" },
    ],
  });
  commentId = idsOf(project).comments.c;
  dir = mkdtempSync(join(tmpdir(), "fb-restore-"));
  trackTempDir(dir);
});
afterAll(() => stack?.close());

const base = () => `/api/v3/projects/${project.slug}`;

/** The mixed workload plus comments on the first feature and likes of the seeded comment. */
function workload(tag: string): (i: number) => HttpRequest & { label: string } {
  const mixed = mixedWorkload(project, tag);
  return (i) => {
    const voter = { "X-API-Key": project.secretKey, "X-VF-Anon": project.tokens[(i * 11) % project.tokens.length]! };
    if (i % 10 === 8) {
      return {
        label: "write",
        method: "POST",
        path: `${base()}/features/${project.featureIds[0]}/comments`,
        headers: voter,
        body: JSON.stringify({ content: `c${i}` }),
      };
    }
    if (i % 10 === 9) return { label: "write", method: "POST", path: `${base()}/comments/${commentId}/like`, headers: voter };
    return mixed(i);
  };
}

describe("import --replace under load", () => {
  it("answers every racing request within the contract, ends every replace, and restores the export", async () => {
    const exported = await exportSnapshot(stack.seeder.handle.db, project.slug);
    const file = join(dir, "export.json");
    writeFileSync(file, JSON.stringify(exported));

    const load = startLoad(stack.server.origin, workload("restore"), { concurrency: 12, maxMs: 90_000, maxRequests: 20_000 });
    const replaces: AdminRun[] = [];
    for (let round = 0; round < 3; round++) {
      await new Promise((resolve) => setTimeout(resolve, 1500));
      replaces.push(await runAdmin(["import", file, "--replace"], stack.pg.url));
    }
    const samples = await load.stop();

    for (const run of replaces) expect(run, run.stderr).toMatchObject({ code: 0 });
    expect(samples.length).toBeGreaterThan(200);
    expect(samples.filter((s) => s.status >= 500 || s.error !== undefined)).toEqual([]);
    expect(describeFailures(samples)).toBe("");
    expect(samples.filter((s) => s.label === "write" && (s.status === 200 || s.status === 201)).length).toBeGreaterThan(50);
    expect(await counterMismatches(stack.seeder.handle.db, project.slug)).toEqual([]);

    // With REDIS_URL the command also gives the project a new content revision, so no instance
    // serves a cached read of the replaced content once it has returned.
    const redis = new Redis(stack.redis!.url);
    const { id } = await stack.seeder.handle.db
      .selectFrom("projects")
      .select("id")
      .where("slug", "=", project.slug)
      .executeTakeFirstOrThrow();
    const revision = await redis.get(`fb:rev:project:${id}`);
    expect(revision).not.toBeNull();
    const last = await runAdmin(["import", file, "--replace"], stack.pg.url, { redisUrl: stack.redis!.url });
    expect(last.code, last.stderr).toBe(0);
    expect(last.stderr).toBe("");
    expect(await redis.get(`fb:rev:project:${id}`)).not.toBe(revision);
    redis.disconnect();
    expect(await exportSnapshot(stack.seeder.handle.db, project.slug)).toEqual(JSON.parse(JSON.stringify(exported)));
    // The same key, a token from the file and a feature id answer; the vote lands.
    const vote = await send(stack.server.origin, {
      method: "POST",
      path: `${base()}/features/${project.featureIds[3]}/vote`,
      headers: { "X-API-Key": project.secretKey, "X-VF-Anon": project.tokens[5]! },
    });
    expect(vote.status, vote.text).toBe(200);
    expect(json(vote).data.vote_count).toBe(1);
    expect(samples.every(acceptable)).toBe(true);
  }, 240_000);

  it("prints only the id map on stdout and progress lines on stderr", async () => {
    const { voters } = anonVoters(300);
    const snapshot = buildSnapshot({ voters, features: openFeatures(3000) });
    const file = join(dir, "large.json");
    writeFileSync(file, JSON.stringify(snapshot));

    const run = await runAdmin(["import", file, "--progress-interval", "0"], stack.pg.url);
    expect(run.code, run.stderr).toBe(0);
    const ids = JSON.parse(run.stdout);
    expect(Object.keys(ids)).toEqual(["project", "ids"]);
    expect(Object.keys(ids.ids.features)).toHaveLength(3000);
    expect(run.stdout).toBe(`${JSON.stringify(ids, null, 2)}\n`);
    const lines = run.stderr.trim().split("\n");
    expect(lines).toContainEqual(expect.stringMatching(/^import: features 3000\/3000 \(\d+ rows\/s\)$/));
    expect(lines).toContainEqual(expect.stringMatching(/^import: voters \d+\/300 \(\d+ rows\/s\)$/));
    expect(lines.at(-1)).toMatch(/^import: done, \d+ rows in \d+\.\d s \(\d+ rows\/s\)$/);

    // Nothing is printed before the interval has passed once (default 2 s: short imports are silent).
    const small = buildSnapshot({ voters: anonVoters(3).voters, features: openFeatures(3) });
    writeFileSync(file, JSON.stringify(small));
    const quiet = await runAdmin(["import", file, "--progress-interval=600000"], stack.pg.url);
    expect(quiet.code, quiet.stderr).toBe(0);
    expect(quiet.stderr).toBe("");
    expect(JSON.parse(quiet.stdout).project.slug).toBe(small.project.slug);
  }, 120_000);
});
