/**
 * Signing (owner-api-v3.md, "Webhooks"): secrets are whsec_ + base64 of 24+ random bytes;
 * signatures verify with the standardwebhooks package; during the rotation overlap both
 * secrets sign and a receiver holding either one verifies; after it only the new one signs.
 */
import { Webhook } from "standardwebhooks";
import { describe, expect, it } from "vitest";
import { generateWebhookSecret, signDelivery, signingSecrets } from "./signing.ts";

describe("webhook signing", () => {
  it("makes whsec_ secrets of 32 random bytes, all different", () => {
    const secrets = new Set(Array.from({ length: 50 }, generateWebhookSecret));
    expect(secrets.size).toBe(50);
    for (const secret of secrets) {
      expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);
      expect(Buffer.from(secret.slice(6), "base64").length).toBeGreaterThanOrEqual(24);
    }
  });

  it("signs so that standardwebhooks verifies, and a changed body does not", () => {
    const secret = generateWebhookSecret();
    const body = JSON.stringify({ id: "evt_1", type: "vote.created" });
    const headers = signDelivery([secret], "evt_1", new Date(), body);
    expect(headers["webhook-id"]).toBe("evt_1");
    expect(headers["webhook-timestamp"]).toMatch(/^\d+$/);
    expect(headers["webhook-signature"]).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
    expect(() => new Webhook(secret).verify(body, { ...headers })).not.toThrow();
    expect(() => new Webhook(secret).verify(`${body} `, { ...headers })).toThrow();
    expect(() => new Webhook(generateWebhookSecret()).verify(body, { ...headers })).toThrow();
  });

  it("signs with both secrets during the overlap (either verifies), with the new one alone after it", () => {
    const now = new Date();
    const webhook = {
      secret: generateWebhookSecret(),
      previous_secret: generateWebhookSecret(),
      previous_secret_expires_at: new Date(now.getTime() + 60_000),
    };
    const body = '{"id":"evt_2"}';
    const during = signDelivery(signingSecrets(webhook, now), "evt_2", now, body);
    expect(during["webhook-signature"].split(" ")).toHaveLength(2);
    for (const secret of [webhook.secret, webhook.previous_secret]) {
      expect(() => new Webhook(secret).verify(body, { ...during })).not.toThrow();
    }
    const later = new Date(now.getTime() + 120_000);
    expect(signingSecrets(webhook, later)).toEqual([webhook.secret]);
  });
});
