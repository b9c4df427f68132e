/**
 * The breaking-change check CI runs (`npm run openapi:diff`, scripts/openapi-diff.ts) fails on
 * what would break a client of the released contract and passes the current document (hardening
 * item 10). Each case runs the real Optic CLI on a copy of the released baseline with one change;
 * the cases of a test run side by side, about 8 s of CPU each (the timeout covers a busy machine).
 * The baseline is the whole document: the owner routes are guarded like the public ones.
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

/** Optic's verdict on the baseline changed by `change`, written to a temporary file. */
async function diffWith(name: string, change: (document: Document) => void) {
  const document = structuredClone(baseline);
  change(document);
  const head = join(dir, `${name}.json`);
  await writeFile(head, JSON.stringify(document));
  return opticDiff(RELEASED, head);
}

const operation = (document: Document, path: string, method: string) => document.paths[`/api/v3${path}`][method];

describe("openapi:diff against the released contract", { timeout: 600_000 }, () => {
  it("passes the committed document and fails a removed response field, a removed enum value and a new required parameter", async () => {
    const [current, removedField, removedEnumValue, requiredParameter] = await Promise.all([
      opticDiff(RELEASED, CURRENT),
      diffWith("removed-field", (document) => {
        const feature = document.components.schemas.FeatureObject;
        delete feature.properties.heading;
        feature.required = feature.required.filter((name: string) => name !== "heading");
      }),
      diffWith("removed-enum-value", (document) => {
        const sort = operation(document, "/projects/{slug}/features", "get").parameters.find((p: Document) => p.name === "sort");
        sort.schema.enum = sort.schema.enum.filter((value: string) => value !== "oldest");
      }),
      diffWith("required-parameter", (document) => {
        operation(document, "/projects/{slug}/changelog", "get").parameters.push({
          name: "locale",
          in: "query",
          required: true,
          schema: { type: "string" },
        });
      }),
    ]);

    expect(current.status, current.output).toBe(0);

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
      diffWith("removed-owner-field", (document) => {
        const webhook = document.components.schemas.WebhookObject;
        delete webhook.properties.disabled_reason;
        webhook.required = webhook.required.filter((name: string) => name !== "disabled_reason");
      }),
      diffWith("removed-owner-path", (document) => {
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
