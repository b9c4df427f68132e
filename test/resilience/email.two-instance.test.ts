/**
 * Email sending across processes (engagement-api-v3.md, "Email notifications", "Delivery"): two
 * server processes on one Postgres, each running its email worker beside the webhook worker,
 * against one real SMTP server (smtp-server). N notifications with digest_minutes 0 -> N emails
 * at the SMTP server, none sent twice (counted by Message-ID and by recipient), each logged sent
 * at its first attempt, within 30 s of its notification; no request was made to send them.
 */
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type SmtpSink, startSmtpSink } from "../support/smtp-sink.ts";
import { type ServerInstance, startServer } from "./support/server.ts";
import { type Stack, startStack } from "./support/stack.ts";

let stack: Stack;
let second: ServerInstance | undefined;
let sink: SmtpSink;

beforeAll(async () => {
  sink = await startSmtpSink();
  stack = await startStack({ env: { SMTP_URL: sink.url, EMAIL_POLL_INTERVAL_MS: "100", EMAIL_CONCURRENCY: "2" } });
  second = await startServer(stack.env);
}, 120_000);
afterAll(async () => {
  await second?.stop();
  await stack?.close();
  await sink?.close();
});

describe("emails with two instances on one Postgres", () => {
  it("N notifications -> N emails at the SMTP server, none sent twice", async () => {
    const N = 200;
    const project = await stack.seeder.importProject({
      project: { notifications: { email_enabled: true, from_address: "updates@two.test", digest_minutes: 0 } },
      voters: Array.from({ length: N }, (_, i) => ({
        ref: `v${i}`,
        kind: "sso",
        sso_id: `two-${i}`,
        display_name: `Voter ${i}`,
        email: `voter-${i}@two.test`,
      })),
      features: [{ ref: "f", board: "roadmap", column: "c-open", heading: "Shared feature" }],
    });
    const db = stack.seeder.handle.db;
    const { id } = await db.selectFrom("projects").select("id").where("slug", "=", project.slug).executeTakeFirstOrThrow();
    const started = Date.now();
    await sql`
      INSERT INTO notifications (project_id, voter_id, feature_id, event_seq, type, data)
      SELECT ${id}, v.id, f.id, v.id, 'status_changed', '{"from": "open", "to": "planned"}'::jsonb
      FROM voters v JOIN features f ON f.project_id = v.project_id
      WHERE v.project_id = ${id}`.execute(db);

    await sink.waitFor((messages) => messages.length >= N, 30_000);
    expect(Date.now() - started).toBeLessThan(30_000);
    // Anything sent twice would arrive by now too.
    await new Promise((resolve) => setTimeout(resolve, 1000));
    expect(sink.messages).toHaveLength(N);
    expect(new Set(sink.messages.map((message) => message.mail.messageId)).size).toBe(N);
    expect(new Set(sink.messages.flatMap((message) => message.envelopeTo)).size).toBe(N);
    const logged = await db.selectFrom("emails").select(["status", "attempts"]).where("project_id", "=", id).execute();
    expect(logged).toHaveLength(N);
    expect(logged.every((email) => email.status === "sent" && email.attempts === 1)).toBe(true);
  });
});
