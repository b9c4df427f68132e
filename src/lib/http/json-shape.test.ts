/** jsonShapeViolation: the limits on a JSON body's shape (lib/http/json-shape.ts), at their edges. */
import { describe, expect, it } from "vitest";
import { JSON_SHAPE_LIMITS, jsonShapeViolation } from "./json-shape.ts";

const bytes = (text: string) => new TextEncoder().encode(text);
const violation = (value: unknown) => jsonShapeViolation(bytes(typeof value === "string" ? value : JSON.stringify(value)));
const objectOf = (keys: number, prefix = "k") => Object.fromEntries(Array.from({ length: keys }, (_, i) => [`${prefix}${i}`, i]));
const nested = (levels: number): unknown => (levels === 0 ? 1 : [nested(levels - 1)]);

describe("jsonShapeViolation", () => {
  it("takes an object of exactly maxKeysPerObject keys and refuses one more", () => {
    expect(violation(objectOf(JSON_SHAPE_LIMITS.maxKeysPerObject))).toBeUndefined();
    expect(violation(objectOf(JSON_SHAPE_LIMITS.maxKeysPerObject + 1))).toMatch(/an object in the body holds more than 1000 keys/);
  });

  it("counts keys across objects against maxKeys", () => {
    const perObject = 500;
    const within = Array.from({ length: JSON_SHAPE_LIMITS.maxKeys / perObject }, (_, i) => objectOf(perObject, `o${i}_`));
    expect(violation(within)).toBeUndefined();
    expect(violation([...within, { one: 1 }])).toMatch(/more than 10000 keys in all/);
  });

  it("takes maxDepth levels of nesting and refuses one more", () => {
    expect(violation(nested(JSON_SHAPE_LIMITS.maxDepth))).toBeUndefined();
    expect(violation(nested(JSON_SHAPE_LIMITS.maxDepth + 1))).toMatch(/deeper than 32 levels/);
  });

  it("counts objects and arrays, empty ones included, against maxContainers", () => {
    expect(violation(Array.from({ length: JSON_SHAPE_LIMITS.maxContainers - 1 }, () => ({})))).toBeUndefined();
    expect(violation(Array.from({ length: JSON_SHAPE_LIMITS.maxContainers }, () => []))).toMatch(/more than 10000 objects and arrays/);
  });

  it("ignores colons, brackets and escaped quotes inside strings", () => {
    const tricky = `a\\":{[${":".repeat(5000)}\\\\`;
    expect(violation({ content: tricky, list: [tricky, "{{{{[[[[".repeat(100)] })).toBeUndefined();
    // An even run of backslashes before a quote ends the string: the colons after it count.
    expect(violation(`{"a":"x\\\\", ${Array.from({ length: 1001 }, (_, i) => `"k${i}":0`).join(",")}}`)).toMatch(/more than 1000 keys/);
  });

  it("takes a one-megabyte body of a long array, a long string or multi-byte text", () => {
    expect(violation({ ids: Array.from({ length: 140_000 }, (_, i) => 100_000 + i) })).toBeUndefined();
    expect(violation({ content: "x".repeat(1024 * 1024 - 20) })).toBeUndefined();
    expect(violation({ content: 'é漢😀"{:'.repeat(50_000) })).toBeUndefined();
  });

  it("never throws on malformed text", () => {
    for (const text of ['{"a":"unterminated', "}}}]]]", '"\\', "", ":::", "[".repeat(10)]) {
      expect(() => violation(text)).not.toThrow();
    }
  });
});
