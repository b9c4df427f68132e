import { describe, expect, it } from "vitest";
import { MAX_UNSUBSCRIBE_TOKEN_LENGTH, signUnsubscribeToken, verifyUnsubscribeToken } from "./unsubscribe-token.ts";

const secret = "a".repeat(64);

describe("unsubscribe tokens", () => {
  it("verifies its own token and names the slug and voter", () => {
    const token = signUnsubscribeToken(secret, "lumen", "v_Ab-1");
    expect(verifyUnsubscribeToken(secret, token)).toEqual({ slug: "lumen", voterPublicId: "v_Ab-1" });
    expect(token.length).toBeLessThanOrEqual(MAX_UNSUBSCRIBE_TOKEN_LENGTH);
  });

  it("refuses an altered voter, slug or MAC, another secret, and malformed tokens", () => {
    const token = signUnsubscribeToken(secret, "lumen", "voter1");
    const [slug, voter, mac] = token.split(".") as [string, string, string];
    expect(verifyUnsubscribeToken(secret, `${slug}.voter2.${mac}`)).toBeUndefined();
    expect(verifyUnsubscribeToken(secret, `other.${voter}.${mac}`)).toBeUndefined();
    const flipped = mac.slice(0, -2) + (mac.at(-2) === "A" ? "B" : "A") + mac.at(-1);
    expect(verifyUnsubscribeToken(secret, `${slug}.${voter}.${flipped}`)).toBeUndefined();
    expect(verifyUnsubscribeToken("b".repeat(64), token)).toBeUndefined();
    // The last character's two spare bits: every other spelling of it is refused too.
    const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    for (const last of alphabet) {
      if (last === mac.at(-1)) continue;
      expect(verifyUnsubscribeToken(secret, `${slug}.${voter}.${mac.slice(0, -1)}${last}`)).toBeUndefined();
    }
    for (const bad of ["", "a.b", "a.b.c.d", `${slug}.${voter}.${mac}=`, `${slug}..${mac}`, "x".repeat(500)]) {
      expect(verifyUnsubscribeToken(secret, bad)).toBeUndefined();
    }
  });
});
