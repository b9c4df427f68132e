/**
 * Spectral's `oas` ruleset, which most API tooling applies, finds nothing in the committed
 * document: every operation tag declared at the top level with a description, every operation
 * described, info.contact present. Spectral's CLI is not a dependency of the project; its core and
 * rulesets come with @useoptic/optic (`npm run openapi:diff`), and this runs them as the CLI
 * would (`spectral lint openapi/openapi.json` with `extends: spectral:oas`); about 15 s of CPU.
 */
import { readFile } from "node:fs/promises";
import { Document, type RulesetDefinition, Spectral } from "@stoplight/spectral-core";
import { Json } from "@stoplight/spectral-parsers";
import { oas } from "@stoplight/spectral-rulesets";
import { describe, expect, it } from "vitest";
import { CURRENT } from "../scripts/openapi-diff.ts";

describe("Spectral oas ruleset", { timeout: 120_000 }, () => {
  it("reports nothing on openapi/openapi.json", async () => {
    const spectral = new Spectral();
    spectral.setRuleset({ extends: [[oas as RulesetDefinition, "recommended"]] });
    const results = await spectral.run(new Document(await readFile(CURRENT, "utf8"), Json, CURRENT));
    expect(results.map((result) => `${result.code} at ${result.path.join(".")}: ${result.message}`)).toEqual([]);
  });
});
