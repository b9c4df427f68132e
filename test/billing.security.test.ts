/**
 * The billing webhooks' refusals (owner-api-v3.md, "Billing sync"; contract, "Limits"): bad,
 * missing, expired and other projects' signatures, no secret set and unknown slugs answer 400
 * signature_invalid alike and change nothing; unknown types and customers nobody carries answer
 * 200 and change nothing; a signed body that is not JSON or lacks a needed field is 422
 * validation_failed; a body over one megabyte is 413 without being read; the per-project budget
 * answers 429; the routes are in /openapi.json, tagged "Billing", without a key.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type BillingProject,
  billingState,
  expectReceived,
  importBillingProject,
  paddleEvent,
  paddleSubscription,
  postPaddle,
  postStripe,
  sendPaddle,
  sendStripe,
  signPaddle,
  signStripe,
  stripeEvent,
  stripeSubscription,
  unix,
  vendorId,
} from "./support/billing.fixture.ts";
import { createTestContext, type TestContext, uniqueSlug } from "./support/harness.ts";
import { expectStatus } from "./support/owner-accounts.fixture.ts";

let ctx: TestContext;
let billing: BillingProject;
let other: BillingProject;
beforeAll(async () => {
  ctx = await createTestContext();
  billing = await importBillingProject(ctx);
  other = await importBillingProject(ctx);
});
afterAll(() => ctx.close());

const stripeBody = () =>
  JSON.stringify(
    stripeEvent(
      "customer.subscription.created",
      stripeSubscription({ id: vendorId("sub"), customer: "cus_ada", status: "active", price: "price_team_m" }),
      unix("2026-11-01T00:00:00Z"),
    ),
  );
const paddleBody = () =>
  JSON.stringify(
    paddleEvent(
      "subscription.created",
      paddleSubscription({ id: vendorId("sub"), customer_id: "ctm_bob", status: "active", price: "pri_team" }),
      "2026-11-01T00:00:00.000000Z",
    ),
  );

async function expectSignatureInvalid(response: Response): Promise<string> {
  const envelope = await expectStatus(response, 400);
  expect(envelope).toMatchObject({ data: null, meta: null, error: { code: "signature_invalid", field: null } });
  return envelope.error.message;
}

/** Runs `act` and asserts the project's billing state, voters, aggregates and events did not move. */
async function expectNothingChanged(project: BillingProject, act: () => Promise<void>): Promise<void> {
  const before = await billingState(ctx.db, project.projectId);
  await act();
  expect(await billingState(ctx.db, project.projectId)).toEqual(before);
}

describe("signatures", () => {
  it("Stripe: bad, missing, expired (past 300 s), future (over 300 s ahead) and another project's signatures are 400 signature_invalid, nothing changed", async () => {
    await expectNothingChanged(billing, async () => {
      const body = stripeBody();
      const slug = billing.project.slug;
      const good = signStripe(body, billing.stripeSecret);
      const tampered = good.replace(/v1=([0-9a-f])/, (_, c: string) => `v1=${c === "0" ? "1" : "0"}`);
      const now = Math.floor(Date.now() / 1000);
      const cases: [string, string | null, string][] = [
        ["tampered signature", tampered, body],
        ["garbage header", "not a signature", body],
        ["missing header", null, body],
        ["expired: 301 s old", signStripe(body, billing.stripeSecret, now - 301), body],
        ["dated 400 s ahead", signStripe(body, billing.stripeSecret, now + 400), body],
        ["other project's secret", signStripe(body, other.stripeSecret), body],
        ["body changed after signing", good, body.replace("active", "paused")],
      ];
      for (const [what, signature, sent] of cases) {
        const message = await expectSignatureInvalid(await postStripe(ctx, slug, sent, signature));
        expect(message, what).toMatch(/Stripe-Signature/);
      }
      // Within the tolerance either way is accepted (checked on another project to keep this one untouched).
      const otherBody = stripeBody();
      await expectReceived(postStripe(ctx, other.project.slug, otherBody, signStripe(otherBody, other.stripeSecret, now - 290)));
      const aheadBody = stripeBody();
      await expectReceived(postStripe(ctx, other.project.slug, aheadBody, signStripe(aheadBody, other.stripeSecret, now + 200)));
    });
  });

  it("Paddle: bad, missing, malformed, expired, future (over 5 s ahead) and another project's signatures are 400 signature_invalid, nothing changed", async () => {
    await expectNothingChanged(billing, async () => {
      const body = paddleBody();
      const slug = billing.project.slug;
      const good = signPaddle(body, billing.paddleSecret);
      const now = Math.floor(Date.now() / 1000);
      const cases: [string, string | null, string][] = [
        ["tampered h1", good.replace(/h1=([0-9a-f])/, (_, c: string) => `h1=${c === "0" ? "1" : "0"}`), body],
        ["no h1", `ts=${now}`, body],
        ["garbage header", "garbage", body],
        ["missing header", null, body],
        ["expired: 60 s old", signPaddle(body, billing.paddleSecret, now - 60), body],
        ["dated 60 s ahead", signPaddle(body, billing.paddleSecret, now + 60), body],
        ["dated 400 s ahead", signPaddle(body, billing.paddleSecret, now + 400), body],
        ["other project's secret", signPaddle(body, other.paddleSecret), body],
        ["body changed after signing", good, body.replace("active", "paused")],
      ];
      for (const [what, signature, sent] of cases) {
        const message = await expectSignatureInvalid(await postPaddle(ctx, slug, sent, signature));
        expect(message, what).toMatch(/Paddle-Signature/);
      }
      // Within the tolerance ahead is accepted (another project, as above).
      const aheadBody = paddleBody();
      await expectReceived(postPaddle(ctx, other.project.slug, aheadBody, signPaddle(aheadBody, other.paddleSecret, now + 3)));
    });
  });

  it("no secret set, and an unknown slug, answer exactly as a bad signature does (slugs cannot be probed)", async () => {
    const bare = await ctx.importProject({ voters: [{ ref: "v", kind: "anonymous", display_name: "V", stripe_customer_id: "cus_ada" }] });
    const unknown = uniqueSlug("nobody");
    const body = stripeBody();
    const anySecret = "whsec_c29tZSBzZWNyZXQgbm9ib2R5IHN0b3JlZA==";
    const badSignature = await (await postStripe(ctx, billing.project.slug, body, signStripe(body, anySecret))).text();
    const noSecret = await postStripe(ctx, bare.slug, body, signStripe(body, anySecret));
    const noProject = await postStripe(ctx, unknown, body, signStripe(body, anySecret));
    for (const response of [noSecret, noProject]) {
      expect(response.status).toBe(400);
      expect(await response.text()).toBe(badSignature);
      expect(response.headers.get("X-RateLimit-Limit")).toBe(String(ctx.deps.config.RATE_LIMIT_BILLING_PER_MINUTE));
    }
    const paddle = paddleBody();
    const paddleBad = await (await postPaddle(ctx, billing.project.slug, paddle, signPaddle(paddle, "pdl_other"))).text();
    expect(await (await postPaddle(ctx, bare.slug, paddle, signPaddle(paddle, "pdl_other"))).text()).toBe(paddleBad);
    expect(await (await postPaddle(ctx, unknown, paddle, signPaddle(paddle, "pdl_other"))).text()).toBe(paddleBad);
    const voter = await ctx.db
      .selectFrom("voters")
      .innerJoin("projects", "projects.id", "voters.project_id")
      .select(["voters.subscription_id", "voters.last_synced_at"])
      .where("projects.slug", "=", bare.slug)
      .executeTakeFirstOrThrow();
    expect(voter).toEqual({ subscription_id: null, last_synced_at: null });
  });

  it("a secret cleared through settings stops verifying at once", async () => {
    const project = await importBillingProject(ctx);
    await expectStatus(
      await ctx.send("PATCH", `/api/v3/projects/${project.project.slug}/admin/settings`, project.project.secretKey, {
        stripe_webhook_secret: null,
      }),
      200,
    );
    await expectNothingChanged(project, async () => {
      const body = stripeBody();
      await expectSignatureInvalid(await postStripe(ctx, project.project.slug, body, signStripe(body, project.stripeSecret)));
    });
  });
});

describe("verified events that change nothing", () => {
  it("unknown event types answer 200 and change nothing (both systems)", async () => {
    await expectNothingChanged(billing, async () => {
      await expectReceived(
        sendStripe(ctx, billing, stripeEvent("customer.created", { id: "cus_ada", object: "customer" }, unix("2026-11-01T00:00:00Z"))),
      );
      await expectReceived(sendStripe(ctx, billing, stripeEvent("charge.refunded", { id: vendorId("ch") }, unix("2026-11-01T00:00:00Z"))));
      await expectReceived(sendPaddle(ctx, billing, paddleEvent("customer.updated", { id: "ctm_bob" }, "2026-11-01T00:00:00Z")));
      await expectReceived(sendPaddle(ctx, billing, paddleEvent("transaction.billed", { id: vendorId("txn") }, "2026-11-01T00:00:00Z")));
    });
  });

  it("customers no voter carries answer 200 and change no voter, aggregate or event", async () => {
    const before = await billingState(ctx.db, billing.projectId);
    const stripe = stripeSubscription({ id: vendorId("sub"), customer: "cus_nobody", status: "canceled", price: "price_team_m" });
    await expectReceived(sendStripe(ctx, billing, stripeEvent("customer.subscription.deleted", stripe, unix("2026-11-01T00:00:00Z"))));
    // A Paddle customer id in the Stripe column (and back) is not a match: each system has its own.
    const paddle = paddleSubscription({ id: vendorId("sub"), customer_id: "cus_ada", status: "canceled", price: "pri_team" });
    await expectReceived(sendPaddle(ctx, billing, paddleEvent("subscription.canceled", paddle, "2026-11-01T00:00:00Z")));
    const after = await billingState(ctx.db, billing.projectId);
    expect(after.voters).toEqual(before.voters);
    expect(after.aggregates).toEqual(before.aggregates);
    expect(after.events).toEqual(before.events);
  });

  it("a signed body that is not JSON is 422 validation_failed (field body); a missing field is named; nothing changed", async () => {
    await expectNothingChanged(billing, async () => {
      const slug = billing.project.slug;
      for (const body of ["{not json", "[1, 2", "nul"]) {
        const stripe = await expectStatus(await postStripe(ctx, slug, body, signStripe(body, billing.stripeSecret)), 422);
        expect(stripe.error).toMatchObject({ code: "validation_failed", field: "body" });
        const paddle = await expectStatus(await postPaddle(ctx, slug, body, signPaddle(body, billing.paddleSecret)), 422);
        expect(paddle.error).toMatchObject({ code: "validation_failed", field: "body" });
      }
      const { customer: _customer, ...noCustomer } = stripeSubscription({
        id: vendorId("sub"),
        customer: "cus_ada",
        status: "active",
        price: "p",
      });
      const body = JSON.stringify(stripeEvent("customer.subscription.updated", noCustomer, unix("2026-11-01T00:00:00Z")));
      const missing = await expectStatus(await postStripe(ctx, slug, body, signStripe(body, billing.stripeSecret)), 422);
      expect(missing.error).toMatchObject({ code: "validation_failed", field: "data.object.customer" });
      const paddle = JSON.stringify(paddleEvent("subscription.updated", { id: vendorId("sub"), status: "active" }, "2026-11-01T00:00:00Z"));
      const paddleMissing = await expectStatus(await postPaddle(ctx, slug, paddle, signPaddle(paddle, billing.paddleSecret)), 422);
      expect(paddleMissing.error).toMatchObject({ code: "validation_failed", field: "data.customer_id" });
      const nul = JSON.stringify(
        stripeEvent(
          "customer.subscription.updated",
          stripeSubscription({ id: "sub_\u0000", customer: "cus_ada", status: "active", price: "p" }),
          1,
        ),
      );
      const refused = await expectStatus(await postStripe(ctx, slug, nul, signStripe(nul, billing.stripeSecret)), 422);
      expect(refused.error).toMatchObject({ code: "validation_failed", field: "data.object.id" });
    });
  });
});

describe("body limit", () => {
  it("1 MB + 1 byte is 413 too_large with Connection: close; a streamed body is not read past the limit; nothing changed", async () => {
    await expectNothingChanged(billing, async () => {
      const body = `{"pad":"${"x".repeat(1024 * 1024 + 1 - 10)}"}`;
      expect(new TextEncoder().encode(body).length).toBe(1024 * 1024 + 1);
      for (const response of [
        await postStripe(ctx, billing.project.slug, body, signStripe(body, billing.stripeSecret)),
        await postPaddle(ctx, billing.project.slug, body, signPaddle(body, billing.paddleSecret)),
      ]) {
        const envelope = await expectStatus(response, 413);
        expect(envelope.error.code).toBe("too_large");
        expect(response.headers.get("Connection")).toBe("close");
      }

      // Without Content-Length: the stream offers 4 MB; the limit stops reading right after 1 MB.
      const chunk = new TextEncoder().encode("y".repeat(64 * 1024));
      let pulled = 0;
      const stream = new ReadableStream<Uint8Array>({
        pull(controller) {
          if (pulled >= 4 * 1024 * 1024) return controller.close();
          pulled += chunk.length;
          controller.enqueue(chunk);
        },
      });
      const streamed = await ctx.app.request(`/api/v3/billing/stripe/${billing.project.slug}`, {
        method: "POST",
        headers: { "Content-Type": "application/json", "Stripe-Signature": "t=1,v1=00" },
        body: stream,
        // @ts-expect-error undici needs duplex for a streamed body
        duplex: "half",
      });
      expect(streamed.status).toBe(413);
      expect(pulled).toBeLessThanOrEqual(1024 * 1024 + 3 * chunk.length);
    });
  });
});

describe("per-project budget", () => {
  it("counts deliveries per project across both systems and answers 429 rate_limited with Retry-After past it", async () => {
    const limited = await createTestContext({ RATE_LIMIT_BILLING_PER_MINUTE: "3" });
    try {
      const project = await importBillingProject(limited);
      limited.clock.pinInsideWindow();
      const statuses: number[] = [];
      const remaining: (string | null)[] = [];
      for (const send of [
        () => sendStripe(limited, project, JSON.parse(stripeBody())),
        () => sendPaddle(limited, project, JSON.parse(paddleBody())),
        () => postStripe(limited, project.project.slug, "{}", "t=1,v1=00"),
        () => sendStripe(limited, project, JSON.parse(stripeBody())),
      ]) {
        const response = await send();
        statuses.push(response.status);
        remaining.push(response.headers.get("X-RateLimit-Remaining"));
        if (response.status === 429) {
          expect((await response.json()).error.code).toBe("rate_limited");
          expect(Number(response.headers.get("Retry-After"))).toBeGreaterThanOrEqual(1);
          expect(response.headers.get("X-RateLimit-Limit")).toBe("3");
        }
      }
      expect(statuses).toEqual([200, 200, 400, 429]);
      expect(remaining).toEqual(["2", "1", "0", "0"]);
      // Another project's budget is its own.
      const second = await importBillingProject(limited);
      await expectReceived(sendStripe(limited, second, JSON.parse(stripeBody())));
    } finally {
      await limited.close();
    }
  });
});

describe("description", () => {
  it("lists both routes in /openapi.json, tagged Billing, without a key, with signature_invalid among the codes", async () => {
    /** The parts of an OpenAPI operation this test reads. */
    interface DescribedOperation {
      tags: string[];
      security: unknown[];
      responses: Record<string, unknown>;
      parameters: { name: string }[];
      requestBody: { content: Record<string, unknown> };
    }
    const document = (await (await ctx.app.request("/api/v3/openapi.json")).json()) as {
      paths: Record<string, { post?: DescribedOperation } | undefined>;
    };
    for (const [path, header] of [
      ["/api/v3/billing/stripe/{slug}", "stripe-signature"],
      ["/api/v3/billing/paddle/{slug}", "paddle-signature"],
    ] as const) {
      const operation = document.paths[path]?.post;
      expect(operation, path).toBeDefined();
      if (!operation) continue;
      expect(operation.tags).toEqual(["Billing"]);
      expect(operation.security).toEqual([]);
      expect(Object.keys(operation.responses).sort()).toEqual(["200", "400", "404", "405", "413", "422", "429", "500"]);
      expect(operation.parameters.map((parameter) => parameter.name)).toContain(header);
      expect(operation.requestBody.content["application/json"]).toBeDefined();
    }
    const wrongMethod = await ctx.app.request(`/api/v3/billing/stripe/${billing.project.slug}`);
    expect(wrongMethod.status).toBe(405);
  });
});
