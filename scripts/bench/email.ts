/**
 * Bench row "email digest" (docs/benchmarks.md, "Targets", engagement;
 * docs/email.md): one digest batch of 1,000 voters
 * (three notifications each, their windows closed) gathered into 1,000 emails and sent through
 * the email worker (EmailWorker.runOnce, nodemailer's pool of EMAIL_CONCURRENCY connections) to
 * a local SMTP sink (smtp-server on 127.0.0.1 that discards what it accepts). Measures the wall
 * time from the first pass to the last email accepted and the bench process's RSS (it runs the
 * worker and the sink, sampled every 50 ms), checks that every email arrived once and is logged
 * sent, then deletes its project.
 *
 *   npm run bench -- --quick --only=email     (from scripts/bench.ts)
 *   DATABASE_URL=postgres://... npx tsx scripts/bench/email.ts   (alone, on any migrated database)
 */
import { randomBytes } from "node:crypto";
import type { AddressInfo } from "node:net";
import { sql } from "kysely";
import pino from "pino";
import { SMTPServer } from "smtp-server";
import { migrateToLatest, openDatabase } from "../../db/connect.ts";
import { importSnapshot } from "../../src/admin/snapshot-import.ts";
import { parseConfig } from "../../src/config.ts";
import { EmailWorker } from "../../src/events/email/email-worker.ts";
import type { Row } from "./report.ts";

/** The row's name (`--only=email` selects it). */
export const EMAIL_DIGEST_ROUTE = "email digest batch: 1,000 voters x 3 notifications -> 1,000 emails, local SMTP sink";

const VOTERS = 1000;
const PER_VOTER = 3;

/** Runs the batch against `databaseUrl` and returns its row (emails/s as req/s, wall time in the note). */
export async function benchEmailDigest(databaseUrl: string, log: (line: string) => void = () => {}): Promise<Row> {
  let accepted = 0;
  const messageIds = new Set<string>();
  const sink = new SMTPServer({
    logger: false,
    disabledCommands: ["STARTTLS", "AUTH"],
    closeTimeout: 50,
    onData(stream, _session, callback) {
      let head = "";
      stream.on("data", (chunk: Buffer) => {
        if (head.length < 8192) head += chunk.toString("latin1");
      });
      stream.on("end", () => {
        const id = /^message-id:\s*(\S+)/im.exec(head)?.[1];
        if (id) messageIds.add(id);
        accepted++;
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => sink.listen(0, "127.0.0.1", () => resolve()));
  const port = (sink.server.address() as AddressInfo).port;

  const handle = await openDatabase({ DATABASE_URL: databaseUrl, poolSize: 8 });
  const slug = `bench-email-${randomBytes(4).toString("hex")}`;
  try {
    await migrateToLatest(handle.db);
    log(`email digest: seeding ${VOTERS} voters x ${PER_VOTER} notifications ...`);
    await importSnapshot(
      handle.db,
      {
        format: "feedback-board-snapshot/1",
        project: {
          slug,
          name: "Bench email",
          notifications: {
            email_enabled: true,
            from_address: "updates@bench.test",
            digest_minutes: 15,
            board_url: "https://bench.test/f/{feature_id}",
          },
        },
        keys: [{ kind: "secret", key: `bench_sk_${randomBytes(16).toString("hex")}` }],
        boards: [{ ref: "roadmap", kind: "roadmap", name: "Roadmap", columns: [{ ref: "open", name: "Open", status: "open" }] }],
        voters: Array.from({ length: VOTERS }, (_, i) => ({
          ref: `v${i}`,
          kind: "sso" as const,
          sso_id: `bench-${i}`,
          display_name: `Voter ${i}`,
          email: `voter-${i}@bench.test`,
        })),
        features: Array.from({ length: PER_VOTER }, (_, i) => ({
          ref: `f${i}`,
          board: "roadmap",
          column: "open",
          heading: `Feature <${i}> & co`,
        })),
      },
      {},
    );
    const project = await handle.db.selectFrom("projects").select("id").where("slug", "=", slug).executeTakeFirstOrThrow();
    const base = BigInt(Date.now()) * 1000n;
    // Windows closed 20 minutes ago: the batch is due at the first pass.
    await sql`
      INSERT INTO notifications (project_id, voter_id, feature_id, event_seq, type, data, created_at)
      SELECT ${project.id}, v.id, f.id, ${String(base)}::bigint + row_number() OVER (), 'status_changed',
             '{"from": "open", "to": "planned"}'::jsonb, now() - interval '20 minutes' + (f.id % 60) * interval '1 second'
      FROM voters v CROSS JOIN features f
      WHERE v.project_id = ${project.id} AND f.project_id = ${project.id}`.execute(handle.db);

    const config = parseConfig({ DATABASE_URL: databaseUrl, SMTP_URL: `smtp://127.0.0.1:${port}`, LOG_LEVEL: "silent" });
    const worker = new EmailWorker({ db: handle.db, config, logger: pino({ level: "silent" }) });
    let maxRss = process.memoryUsage().rss;
    const sampler = setInterval(() => {
      maxRss = Math.max(maxRss, process.memoryUsage().rss);
    }, 50);
    log("email digest: gathering and sending ...");
    const started = performance.now();
    let passes = 0;
    let made = 0;
    try {
      while (accepted < VOTERS && passes < 50) {
        const result = await worker.runOnce();
        made += result.made;
        passes++;
      }
    } finally {
      clearInterval(sampler);
      await worker.stop(1000);
    }
    const ms = performance.now() - started;
    const logged = await handle.db
      .selectFrom("emails")
      .select(({ fn }) => ["status", fn.countAll<string>().as("n")])
      .where("project_id", "=", project.id)
      .groupBy("status")
      .execute();
    const sent = Number(logged.find((row) => row.status === "sent")?.n ?? 0);
    const exact = accepted === VOTERS && messageIds.size === VOTERS && made === VOTERS && sent === VOTERS;
    const check = exact
      ? "each sent once, logged sent"
      : `MISMATCH: ${accepted} accepted, ${messageIds.size} ids, ${made} made, ${sent} sent`;
    log(`email digest: ${VOTERS} emails in ${Math.round(ms)} ms (${passes} passes); ${check}`);
    return {
      route: EMAIL_DIGEST_ROUTE,
      project: "-",
      reqPerSec: (VOTERS * 1000) / ms,
      p50: ms,
      p99: ms,
      bytes: 0,
      non2xx: exact ? 0 : 1,
      note: `(emails/s; p50 = p99 = wall ms of the batch; bench process max RSS ${Math.round(maxRss / 1048576)} MB; ${check})`,
    };
  } finally {
    await handle.db.deleteFrom("projects").where("slug", "=", slug).execute();
    await handle.close();
    await new Promise<void>((resolve) => sink.close(() => resolve()));
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const url = process.env.DATABASE_URL;
  if (!url) throw new Error("set DATABASE_URL");
  const row = await benchEmailDigest(url, (line) => process.stderr.write(`${line}\n`));
  process.stdout.write(`${JSON.stringify(row)}\n`);
}
