/**
 * A bound on the shape of a JSON request body, checked on its bytes before JSON.parse builds it.
 *
 * Why: JSON.parse's cost grows with the objects and property names it must build far more than
 * with the body's bytes. Measured on the 2-core host (Node 20, loaded): 900 KB holding one object
 * of 100,000 keys took 200-470 ms to parse, 300,000 empty objects 320-550 ms, while 1,000
 * objects of 20 keys each (20,000 keys) took about 1 ms and 1 MB of a flat array of numbers or
 * strings 20-50 ms. Every body this API takes is narrow (public bodies: a few keys; owner bodies:
 * some tens of keys and arrays of up to about a thousand ids or small objects; billing events:
 * some hundreds of keys), so a body past these limits is refused before it is parsed. Long
 * arrays of scalars and long strings stay allowed: the contract's one-megabyte body ("Limits")
 * of those parses in tens of milliseconds. The scan reads the body's bytes, before they are
 * decoded to text (decoding 900 KB cost about as much as the scan of a megabyte, 1-15 ms): the
 * bytes it looks for (quote, backslash, colon, brackets) never occur inside a multi-byte UTF-8
 * character.
 */

export interface JsonShapeLimits {
  /** Objects and arrays open at once. */
  maxDepth: number;
  /** Keys in any one object. */
  maxKeysPerObject: number;
  /** Keys across the whole body. */
  maxKeys: number;
  /** Objects and arrays across the whole body. */
  maxContainers: number;
}

export const JSON_SHAPE_LIMITS: Readonly<JsonShapeLimits> = Object.freeze({
  maxDepth: 32,
  maxKeysPerObject: 1000,
  maxKeys: 10_000,
  maxContainers: 10_000,
});

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COLON = 0x3a;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;

/**
 * Scans a JSON body's UTF-8 bytes once, building nothing, and returns why it exceeds `limits`
 * (a sentence for the error message), or undefined when it does not. Outside strings every colon follows a key,
 * so keys are counted by colons, each against the innermost open container. Malformed text never
 * throws here: it is counted as far as it goes and left for JSON.parse to refuse.
 */
export function jsonShapeViolation(bytes: Uint8Array, limits: Readonly<JsonShapeLimits> = JSON_SHAPE_LIMITS): string | undefined {
  const { maxDepth, maxKeysPerObject, maxKeys, maxContainers } = limits;
  const keysOpen = new Int32Array(maxDepth + 1);
  let depth = 0;
  let keys = 0;
  let containers = 0;
  const length = bytes.length;
  for (let i = 0; i < length; i++) {
    const char = bytes[i]!;
    if (char === QUOTE) {
      // The closing quote is the first one after an even run of backslashes. Each run is counted
      // once, so the whole scan stays linear whatever the escapes.
      let end = bytes.indexOf(QUOTE, i + 1);
      for (;;) {
        if (end === -1) return undefined;
        let slashes = 0;
        while (bytes[end - 1 - slashes] === BACKSLASH) slashes++;
        if ((slashes & 1) === 0) break;
        end = bytes.indexOf(QUOTE, end + 1);
      }
      i = end;
    } else if (char === COLON) {
      if (++keys > maxKeys) return `the body holds more than ${maxKeys} keys in all`;
      if (depth > 0 && ++keysOpen[depth - 1]! > maxKeysPerObject) return `an object in the body holds more than ${maxKeysPerObject} keys`;
    } else if (char === OPEN_OBJECT || char === OPEN_ARRAY) {
      if (++depth > maxDepth) return `the body nests objects and arrays deeper than ${maxDepth} levels`;
      if (++containers > maxContainers) return `the body holds more than ${maxContainers} objects and arrays`;
      keysOpen[depth - 1] = 0;
    } else if ((char === CLOSE_OBJECT || char === CLOSE_ARRAY) && depth > 0) {
      depth--;
    }
  }
  return undefined;
}
