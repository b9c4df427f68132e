/**
 * The breaking-change check CI runs (`npm run openapi:diff`, scripts/openapi-diff.ts) fails on
 * what would break a client of the released contract and passes the current document
 * (docs/testing.md, "Commands and CI"). Each planted break runs the real Optic CLI on the released
 * baseline narrowed to the
 * paths the break touches (plus /health), against the same narrowing with the break: Optic's time
 * grows with the document (about 80 s of CPU for the whole of it, 4 s for one area), and the rule
 * that fails a break does not depend on the paths left out. The whole document is diffed once, in
 * the run on the embedded default (the document does not depend on the storage set-up; CI's
 * `npm run openapi:diff` diffs it as well). The baseline is the whole document: the owner routes
 * are guarded like the public ones.
 */
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CURRENT, opticDiff, RELEASED, removedWebhooks, unreleasedOperations } from "../scripts/openapi-diff.ts";

type Document = any;
let dir: string;
let baseline: Document;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "openapi-diff-"));
  baseline = JSON.parse(await readFile(RELEASED, "utf8"));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

/** The baseline with only `/api/v3/health` and the paths under `/api/v3` that start with one of `prefixes`. */
function narrowed(prefixes: string[]): Document {
  const document = structuredClone(baseline);
  delete document.webhooks;
  for (const path of Object.keys(document.paths)) {
    if (path !== "/api/v3/health" && !prefixes.some((prefix) => path.startsWith(`/api/v3${prefix}`))) delete document.paths[path];
  }
  return document;
}

/**
 * Optic's verdict on the baseline narrowed to `prefixes` against the same narrowing changed by
 * `change`, both written to temporary files.
 */
async function diffWith(name: string, prefixes: string[], change: (document: Document) => void) {
  const base = join(dir, `${name}.base.json`);
  const head = join(dir, `${name}.json`);
  const document = narrowed(prefixes);
  await writeFile(base, JSON.stringify(document));
  change(document);
  await writeFile(head, JSON.stringify(document));
  return opticDiff(base, head);
}

const operation = (document: Document, path: string, method: string) => document.paths[`/api/v3${path}`][method];

describe("openapi:diff against the released contract", { timeout: 600_000 }, () => {
  it.skipIf(process.env.DATABASE_URL !== undefined)("passes the committed document", async () => {
    const current = await opticDiff(RELEASED, CURRENT);
    expect(current.status, current.output).toBe(0);
  });

  it("fails a removed response field, a removed enum value and a new required parameter", async () => {
    const [removedField, removedEnumValue, requiredParameter] = await Promise.all([
      diffWith("removed-field", ["/projects/{slug}/features"], (document) => {
        const feature = document.components.schemas.FeatureObject;
        delete feature.properties.heading;
        feature.required = feature.required.filter((name: string) => name !== "heading");
      }),
      diffWith("removed-enum-value", ["/projects/{slug}/features"], (document) => {
        const sort = operation(document, "/projects/{slug}/features", "get").parameters.find((p: Document) => p.name === "sort");
        sort.schema.enum = sort.schema.enum.filter((value: string) => value !== "oldest");
      }),
      diffWith("required-parameter", ["/projects/{slug}/changelog"], (document) => {
        operation(document, "/projects/{slug}/changelog", "get").parameters.push({
          name: "locale",
          in: "query",
          required: true,
          schema: { type: "string" },
        });
      }),
    ]);

    expect(removedField.status).toBe(1);
    expect(removedField.output).toContain("cannot remove response property 'heading'");

    expect(removedEnumValue.status).toBe(1);
    expect(removedEnumValue.output).toContain("cannot remove enum option 'oldest' from query parameter 'sort'");

    expect(requiredParameter.status).toBe(1);
    expect(requiredParameter.output).toContain("cannot add required query parameter locale");
  });

  it("fails a response field removed from an owner object and a removed owner path", async () => {
    const webhooks = "/api/v3/projects/{slug}/admin/webhooks/{webhook_id}";
    const [removedOwnerField, removedOwnerPath] = await Promise.all([
      diffWith("removed-owner-field", ["/projects/{slug}/admin/webhooks"], (document) => {
        const webhook = document.components.schemas.WebhookObject;
        delete webhook.properties.disabled_reason;
        webhook.required = webhook.required.filter((name: string) => name !== "disabled_reason");
      }),
      diffWith("removed-owner-path", ["/projects/{slug}/admin/webhooks"], (document) => {
        delete document.paths[`${webhooks}/rotate-secret`];
      }),
    ]);

    expect(removedOwnerField.status, removedOwnerField.output).toBe(1);
    expect(removedOwnerField.output).toContain("cannot remove response property 'disabled_reason'");

    expect(removedOwnerPath.status, removedOwnerPath.output).toBe(1);
    expect(removedOwnerPath.output).toContain("rotate-secret");
  });

  it("lists the operations and webhooks the released contract lacks (unguarded until released)", async () => {
    const document = structuredClone(baseline);
    document.paths["/api/v3/added"] = { get: document.paths["/api/v3/health"].get };
    document.webhooks["feature.added"] = document.webhooks.ping;
    const head = join(dir, "added.json");
    await writeFile(head, JSON.stringify(document));
    expect(unreleasedOperations(RELEASED, head)).toEqual(["GET /api/v3/added", "webhook POST feature.added"]);
    expect(unreleasedOperations(RELEASED, RELEASED)).toEqual([]);
  });

  it("fails a removed webhook, which Optic does not compare", async () => {
    const document = structuredClone(baseline);
    delete document.webhooks.ping;
    const head = join(dir, "removed-webhook.json");
    await writeFile(head, JSON.stringify(document));
    expect(removedWebhooks(RELEASED, head)).toEqual(["POST ping"]);
    expect(removedWebhooks(RELEASED, CURRENT)).toEqual([]);
  });
});
