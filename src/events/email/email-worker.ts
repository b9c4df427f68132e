/**
 * The email worker of a process (engagement-api-v3.md, "Email notifications"; docs/email.md):
 * one loop that, every EMAIL_POLL_INTERVAL_MS, closes the digest windows that have ended
 * (gatherDigests) and sends the emails due (sendDueEmails) through one pooled nodemailer
 * transport built from SMTP_URL. It runs beside the webhook worker in every server (unless
 * WEBHOOK_WORKER=off) and in `npm run worker`, never on a request's path: sending never delays a
 * request. Several instances run it at once safely (see emails.repository.ts). Errors (the
 * database or the SMTP server away) are logged and the loop goes on at its next turn.
 *
 * Timing: a notification's email leaves within EMAIL_POLL_INTERVAL_MS (default 5 s) of its
 * window's end when the SMTP server answers, well inside the spec's 30 s.
 */
import nodemailer from "nodemailer";
import type { Logger } from "pino";
import type { Db } from "../../../db/connect.ts";
import { type Config, publicBaseUrl } from "../../config.ts";
import { gatherDigests } from "./emails.repository.ts";
import { type MailTransport, sendDueEmails } from "./sender.ts";

export interface EmailWorkerDeps {
  db: Db;
  config: Config;
  logger: Logger;
}

export interface EmailWorkerOptions {
  /** A transport to use instead of one built from SMTP_URL (tests). */
  transport?: MailTransport & { close?: () => void };
  /** The clock (default: system time). */
  now?: () => Date;
}

/** nodemailer's SMTP transport for `smtpUrl`, pooled, with bounded waits (within the claim lease). */
export function createSmtpTransport(smtpUrl: string, connections: number) {
  return nodemailer.createTransport({
    url: smtpUrl,
    pool: true,
    maxConnections: connections,
    connectionTimeout: 10_000,
    greetingTimeout: 10_000,
    socketTimeout: 30_000,
  });
}

export class EmailWorker {
  private stopping = false;
  private timer: NodeJS.Timeout | undefined;
  private wakeUp: (() => void) | undefined;
  private loopDone: Promise<void> = Promise.resolve();
  private readonly transport: MailTransport & { close?: () => void };
  private readonly now: () => Date;

  constructor(
    private readonly deps: EmailWorkerDeps,
    options: EmailWorkerOptions = {},
  ) {
    const { SMTP_URL, EMAIL_CONCURRENCY } = deps.config;
    if (!options.transport && !SMTP_URL) throw new Error("EmailWorker needs SMTP_URL or a transport");
    this.transport = options.transport ?? createSmtpTransport(SMTP_URL as string, EMAIL_CONCURRENCY);
    this.now = options.now ?? (() => new Date());
  }

  /** Starts the loop. */
  start(): void {
    this.loopDone = this.loop();
  }

  /** Runs a pass now instead of at the next interval. */
  wake(): void {
    clearTimeout(this.timer);
    this.wakeUp?.();
  }

  /**
   * Stops the loop: waits up to `graceMs` for the pass under way, then closes the SMTP
   * connections (a send cut short is recorded as a connection failure and retried) and waits
   * for the pass to end.
   */
  async stop(graceMs = 5000): Promise<void> {
    if (this.stopping) return this.loopDone;
    this.stopping = true;
    this.wake();
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([this.loopDone, new Promise((resolve) => (timer = setTimeout(resolve, graceMs)))]);
    clearTimeout(timer);
    this.transport.close?.();
    await this.loopDone;
  }

  /** One pass: closes the ended windows, then sends what is due. Exposed for tests and the bench. */
  async runOnce(): Promise<{ made: number; sent: number; retried: number; failed: number; dropped: number }> {
    const { db, config, logger } = this.deps;
    let made = 0;
    try {
      made = await gatherDigests(db, this.now());
    } catch (error) {
      logger.error({ err: error }, "email worker: gathering failed; trying again later");
    }
    const counts = await sendDueEmails(db, this.transport, this.now, {
      publicBaseUrl: publicBaseUrl(config),
      retrySchedule: config.EMAIL_RETRY_SCHEDULE_SECONDS,
      // Claimed per round: enough to keep every pooled connection busy while the round's
      // context is read, well inside the claim's lease.
      concurrency: config.EMAIL_CONCURRENCY * 10,
      onError: (error, emailId) => logger.error({ err: error, email_id: emailId }, "email attempt could not be recorded"),
    });
    if (counts.retried + counts.failed > 0) logger.warn(counts, "email worker: some emails were not accepted");
    return { made, ...counts };
  }

  private async loop(): Promise<void> {
    while (!this.stopping) {
      try {
        await this.runOnce();
      } catch (error) {
        if (this.stopping) break;
        this.deps.logger.error({ err: error }, "email worker: pass failed; trying again later");
      }
      if (this.stopping) break;
      await new Promise<void>((resolve) => {
        this.wakeUp = resolve;
        this.timer = setTimeout(resolve, this.deps.config.EMAIL_POLL_INTERVAL_MS);
      });
      this.wakeUp = undefined;
    }
  }
}

/** Starts the email worker of this process, or returns undefined when SMTP_URL is unset (no email is sent). */
export function startEmailWorker(deps: EmailWorkerDeps, options: EmailWorkerOptions = {}): EmailWorker | undefined {
  if (!deps.config.SMTP_URL && !options.transport) return undefined;
  const worker = new EmailWorker(deps, options);
  worker.start();
  return worker;
}
