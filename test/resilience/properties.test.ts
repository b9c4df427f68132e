/**
 * Property tests with fast-check over every keyed route of the live OpenAPI document (so a new
 * route is covered without touching this file), in process through createTestContext:
 * - requests built from the route's own parameter and body schemas never get a 5xx, and are
 *   never refused as malformed (422) except by the documented cross-field rules;
 * - a request with exactly one parameter or body field broken gets 422 validation_failed naming
 *   that field;
 * - every answer, whatever it is, is the envelope: exactly data, meta and error.
 */
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestContext, type ImportedProject, type TestContext } from "../support/harness.ts";
import { expectEnvelope, expectError } from "./support/assertions.ts";
import { idsOf } from "./support/seed.ts";
import { recordCount } from "./support/tally.ts";

type Schema = {
  type?: string | string[];
  enum?: unknown[];
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  items?: Schema;
  $ref?: string;
  properties?: Record<string, Schema>;
  required?: string[];
};
type Parameter = { name: string; in: "path" | "query" | "header"; required?: boolean; schema: Schema };
type Operation = { method: string; path: string; parameters: Parameter[]; body?: Schema };
type Built = { path: string; query: [string, string][]; body?: unknown; rawBody?: string };

const RUNS = 35;
/**
 * 422s a request built from the schemas may still get: rules between fields or against data
 * (`ids`: POST /notifications/read takes `ids` or `all: true`, exactly one, engagement-api-v3.md).
 */
const SEMANTIC_FIELDS = new Set(["scope", "board", "column", "parent_id", "app_version", "ids"]);

let ctx: TestContext;
let p: ImportedProject;
let anon: string;
const operations: Operation[] = [];
let pools: { features: number[]; comments: number[]; releases: number[]; messages: number[]; tags: number[]; columns: number[] };
let components: Record<string, Schema>;

beforeAll(async () => {
  ctx = await createTestContext();
  anon = `anon-property-${Date.now()}-0000001`;
  p = await ctx.importProject({
    voters: [
      { ref: "v", kind: "anonymous", anon_token: anon },
      { ref: "w", kind: "anonymous" },
    ],
    tags: [
      { ref: "t1", name: "One" },
      { ref: "t2", name: "Two" },
    ],
    features: [
      { ref: "f1", board: "roadmap", column: "c-open", heading: "One", description: "First", tags: ["t1"] },
      { ref: "f2", board: "roadmap", column: "c-planned", heading: "Two", description: "Second", tags: ["t2"] },
      { ref: "f3", board: "roadmap", column: "c-done", heading: "Three", description: "Third" },
    ],
    votes: [{ voter: "w", feature: "f1" }],
    comments: [
      { ref: "c1", feature: "f1", voter: "w", content: "Top" },
      { ref: "c2", feature: "f1", voter: "w", parent: "c1", content: "Reply" },
    ],
    releases: [
      { ref: "r1", name: "1.0", body: "Notes", published_at: "2026-01-01T00:00:00Z", features: [{ feature: "f3", changelog_type: "new" }] },
    ],
    messages: [{ ref: "m1", title: "Hi", body: "There" }],
  });
  const ids = idsOf(p);
  const values = (o: Record<string, number> | undefined) => Object.values(o ?? {});
  pools = {
    features: values(ids.features),
    comments: values(ids.comments),
    releases: values(ids.releases),
    messages: values(ids.messages),
    tags: values(ids.tags),
    columns: values(ids.columns),
  };
  const document = await (await ctx.app.request("/api/v3/openapi.json")).json();
  components = document.components?.schemas ?? {};
  // Header parameters are shared components ($ref); path and query parameters are inline.
  const sharedParameters: Record<string, Parameter> = document.components?.parameters ?? {};
  const parameterOf = (p: Parameter & { $ref?: string }): Parameter => (p.$ref ? sharedParameters[p.$ref.split("/").pop()!]! : p);
  for (const [path, item] of Object.entries(document.paths as Record<string, Record<string, any>>)) {
    if (!path.startsWith("/api/v3/projects/") && path !== "/api/v3/board") continue;
    // The contract's routes; owner routes (owner-api-v3.md) change the seeded data they would
    // share (deletions, merges) and have their areas' own error and security suites.
    if (path.includes("/admin/")) continue;
    for (const [method, op] of Object.entries(item)) {
      // JSON routes only: the Atom feeds answer XML and the MCP endpoint speaks JSON-RPC; their
      // own suites (test/feeds.*, test/mcp.*) check their refusals.
      const success = op.responses?.["200"] ?? op.responses?.["201"];
      if (!success?.content?.["application/json"] || path.endsWith("/mcp")) continue;
      operations.push({
        method: method.toUpperCase(),
        path,
        parameters: ((op.parameters ?? []) as Parameter[]).map(parameterOf),
        body: op.requestBody?.content?.["application/json"]?.schema,
      });
    }
  }
});
afterAll(() => ctx.close());

const resolve = (schema: Schema): Schema => (schema.$ref ? resolve(components[schema.$ref.split("/").pop()!]!) : schema);
const typeOf = (schema: Schema) => (Array.isArray(schema.type) ? schema.type.find((t) => t !== "null") : schema.type);

/** Text of valid Unicode without NUL (what Postgres text can hold), at most `max` UTF-16 units. */
function text(min: number, max: number): fc.Arbitrary<string> {
  const unit = fc.oneof(
    fc.string({ unit: "grapheme", maxLength: 40 }),
    fc.string({ unit: "binary-ascii", maxLength: 40 }),
    fc.constantFrom("'; DROP TABLE features;--", "%_\\", "👩‍👩‍👧", "e\u0301"),
  );
  return (
    fc
      .array(unit, { maxLength: 4 })
      // biome-ignore lint/suspicious/noControlCharactersInRegex: NUL is what this generator must leave out
      .map((parts) => parts.join("").replace(/\u0000/g, ""))
      .map((s) => (s.length > max ? s.slice(0, max).replace(/[\ud800-\udbff]$/, "") : s))
      .filter((s) => s.length >= min && s.trim().length >= Math.min(min, 1))
  );
}

/** A valid value for a parameter or field, with pools of real ids where the name tells. */
function validValue(name: string, raw: Schema, op: Operation, required = false): fc.Arbitrary<unknown> {
  const schema = resolve(raw);
  if (name === "slug") return fc.constant(p.slug);
  const ids = (pool: number[]) =>
    fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...pool) }, { weight: 1, arbitrary: fc.integer({ min: 1, max: 2147483647 }) });
  if (name === "id" || name === "feature_id") {
    if (op.path.includes("/changelog/")) return ids(pools.releases);
    if (op.path.includes("/messages/")) return ids(pools.messages);
    return ids(pools.features);
  }
  if (name === "cid" || name === "parent_id") return ids(pools.comments);
  if (name === "board") return fc.constantFrom("roadmap");
  if (name === "column") return fc.constantFrom(...pools.columns, -1);
  if (name === "tag") return fc.array(ids(pools.tags), { minLength: 1, maxLength: 3 });
  if (name === "app_version") return fc.tuple(fc.nat(20), fc.nat(20), fc.nat(20)).map(([a, b, c]) => `${a}.${b}.${c}`);
  if (name === "scope") return fc.constant("project");
  if (name === "anon_token") return fc.constantFrom(anon, `anon-unknown-${"x".repeat(20)}`);
  if (schema.enum) return fc.constantFrom(...schema.enum);
  switch (typeOf(schema)) {
    case "integer":
      return fc.integer({ min: schema.minimum ?? -1000, max: Math.min(schema.maximum ?? 1_000_000, 1_000_000) });
    case "number":
      return fc.double({ min: schema.minimum ?? -1e6, max: schema.maximum ?? 1e6, noNaN: true });
    case "boolean":
      return fc.boolean();
    case "array":
      return fc.array(validValue(`${name}[]`, schema.items ?? {}, op), { minLength: 1, maxLength: 3 });
    default:
      // A required text without a declared minimum is taken to need one visible character.
      return text(schema.minLength ?? (required ? 1 : 0), Math.min(schema.maxLength ?? 300, 3000));
  }
}

/** Values that break `schema` (out of range, wrong type, not a member, too long). */
function invalidValue(raw: Schema, inBody: boolean): fc.Arbitrary<unknown> {
  const options = breakingValues(raw, inBody);
  return options.length > 0 ? fc.oneof(...options) : fc.constant(undefined);
}

/** The kinds of value that break `raw`; none when the schema bounds nothing. */
function breakingValues(raw: Schema, inBody: boolean): fc.Arbitrary<unknown>[] {
  const schema = resolve(raw);
  const options: fc.Arbitrary<unknown>[] = [];
  const type = typeOf(schema);
  if (schema.enum) options.push(fc.constantFrom("zzz-not-a-member", "", "NULL"));
  if (type === "integer" || type === "number") {
    options.push(fc.constantFrom("abc", "1.5", "", "0x", "1e400"));
    if (schema.minimum !== undefined) options.push(fc.integer({ min: schema.minimum - 1000, max: schema.minimum - 1 }));
    if (schema.maximum !== undefined) options.push(fc.integer({ min: schema.maximum + 1, max: schema.maximum + 1000 }));
    if (inBody) options.push(fc.constantFrom("12", true, {}, []));
  }
  if (type === "string" && !schema.enum) {
    if (schema.maxLength !== undefined) options.push(fc.integer({ min: 1, max: 50 }).map((n) => "x".repeat(schema.maxLength! + n)));
    if ((schema.minLength ?? 0) >= 1) options.push(fc.constant(""));
    if (inBody) options.push(fc.constantFrom(5, true, null, {}, ["a"]));
  }
  if (type === "array" && schema.items) {
    const items = breakingValues(schema.items, inBody);
    if (items.length > 0) options.push(fc.oneof(...items).map((v) => [v]));
  }
  return options;
}

function bodyValid(op: Operation): fc.Arbitrary<unknown> {
  if (!op.body) return fc.constant(undefined);
  const schema = resolve(op.body);
  const entries = Object.entries(schema.properties ?? {}).map(([name, prop]) => {
    const required = schema.required?.includes(name) ?? false;
    const value = validValue(name, prop, op, required);
    return [name, required ? value : fc.option(value, { nil: undefined })] as const;
  });
  return fc.record(Object.fromEntries(entries)).map((o) => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)));
}

function paramsValid(op: Operation): fc.Arbitrary<Record<string, unknown>> {
  const entries = op.parameters
    .filter((x) => x.in !== "header")
    .map((param) => {
      const value = validValue(param.name, param.schema, op);
      return [param.name, param.required ? value : fc.option(value, { nil: undefined })] as const;
    });
  return fc.record(Object.fromEntries(entries));
}

function build(op: Operation, params: Record<string, unknown>, body: unknown): Built {
  let path = op.path;
  const query: [string, string][] = [];
  for (const param of op.parameters) {
    const value = params[param.name];
    if (value === undefined) continue;
    if (param.in === "path") path = path.replace(`{${param.name}}`, encodeURIComponent(String(value)));
    else if (param.in === "query") for (const item of Array.isArray(value) ? value : [value]) query.push([param.name, String(item)]);
  }
  return { path, query, body };
}

async function send(op: Operation, built: Built): Promise<{ status: number; body: any }> {
  const search = new URLSearchParams(built.query).toString();
  const hasBody = built.rawBody !== undefined || built.body !== undefined;
  const response = await ctx.app.request(`${built.path}${search ? `?${search}` : ""}`, {
    method: op.method,
    headers: { "X-API-Key": p.secretKey, "X-VF-Anon": anon, ...(hasBody ? { "Content-Type": "application/json" } : {}) },
    body: built.rawBody ?? (built.body === undefined ? undefined : JSON.stringify(built.body)),
  });
  const textBody = await response.text();
  return { status: response.status, body: textBody === "" ? undefined : JSON.parse(textBody) };
}

function expectContractAnswer(status: number, body: any): void {
  expect(status, JSON.stringify(body)).toBeLessThan(500);
  expectEnvelope(body);
  if (status >= 400) expectError(status, body);
  else {
    expect(body.error).toBeNull();
    if (body.meta !== null) expect(Object.keys(body.meta).sort()).toEqual(["has_more", "page", "per_page", "total", "total_pages"]);
  }
}

describe("property: requests built from the route schemas", () => {
  it("never get a 5xx, are never refused as malformed, and always get the envelope", async () => {
    expect(operations.length).toBeGreaterThanOrEqual(14);
    let runs = 0;
    const statuses = new Map<number, number>();
    for (const op of operations) {
      await fc.assert(
        fc.asyncProperty(paramsValid(op), bodyValid(op), async (params, body) => {
          const { status, body: json } = await send(op, build(op, params, body));
          runs++;
          statuses.set(status, (statuses.get(status) ?? 0) + 1);
          expectContractAnswer(status, json);
          if (status === 422)
            expect(SEMANTIC_FIELDS.has(json.error.field), `${op.method} ${op.path}: ${JSON.stringify(json.error)}`).toBe(true);
        }),
        { numRuns: RUNS, seed: 20261122 },
      );
    }
    const spread = [...statuses]
      .sort(([a], [b]) => a - b)
      .map(([status, n]) => `${status}x${n}`)
      .join(" ");
    console.info(`properties: ${runs} schema-valid requests over ${operations.length} operations (${spread})`);
    // Most of them must be accepted, or the generators test nothing but refusals.
    expect((statuses.get(200) ?? 0) + (statuses.get(201) ?? 0)).toBeGreaterThan(runs / 2);
  });
});

describe("property: one parameter or field broken", () => {
  it("gets 422 validation_failed naming it, in the envelope", async () => {
    let runs = 0;
    for (const op of operations) {
      const targets: { name: string; where: "param" | "body"; schema: Schema; inPath?: boolean }[] = [
        ...op.parameters
          .filter((x) => x.name !== "slug" && x.in !== "header")
          .map((x) => ({ name: x.name, where: "param" as const, schema: x.schema, inPath: x.in === "path" })),
        ...Object.entries(resolve(op.body ?? {}).properties ?? {}).map(([name, schema]) => ({ name, where: "body" as const, schema })),
      ];
      // Only what a schema bounds can be broken (a free text such as a feed's `key` cannot): the
      // filter below would otherwise never find a value.
      const breakable = targets.filter((t) => breakingValues(t.schema, t.where === "body").length > 0);
      if (breakable.length === 0) continue;
      const arbitrary = fc
        .constantFrom(...breakable)
        .chain((target) =>
          fc.tuple(fc.constant(target), paramsValid(op), bodyValid(op), invalidValue(target.schema, target.where === "body")),
        )
        .filter(([target, , , bad]) => bad !== undefined && !(target.inPath && bad === "")); // "" is no path segment
      await fc.assert(
        fc.asyncProperty(arbitrary, async ([target, params, body, bad]) => {
          const built =
            target.where === "param"
              ? build(op, { ...params, [target.name]: bad }, body)
              : build(op, params, { ...(body as object), [target.name]: bad });
          const { status, body: json } = await send(op, built);
          runs++;
          expect(status, `${op.method} ${op.path} ${target.name}=${JSON.stringify(bad)} -> ${JSON.stringify(json)}`).toBe(422);
          expectError(422, json, "validation_failed");
          expect(
            json.error.field === target.name || json.error.field?.startsWith(`${target.name}[`),
            `${target.name} vs ${json.error.field}`,
          ).toBe(true);
        }),
        { numRuns: RUNS, seed: 20261122 },
      );
    }
    recordCount("hostile", "property runs: one broken parameter or field refused with 422", runs);
  });

  it("gets 422 for a body that is not a JSON object, on every route with a body", async () => {
    let runs = 0;
    for (const op of operations.filter((o) => o.body)) {
      await fc.assert(
        fc.asyncProperty(
          paramsValid(op),
          fc.constantFrom("[]", "null", '"text"', "42", "{", '{"a":', "\u0000", "{}}"),
          async (params, raw) => {
            const built = { ...build(op, params, undefined), rawBody: raw };
            const { status, body } = await send(op, built);
            runs++;
            // An empty object is a valid identity request; everything else here is malformed.
            expect(status, `${op.path} ${raw}`).toBe(422);
            expectError(422, body, "validation_failed");
          },
        ),
        { numRuns: 16, seed: 7 },
      );
    }
    recordCount("hostile", "property runs: malformed JSON bodies refused with 422", runs);
  });
});
