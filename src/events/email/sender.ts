/**
 * Sending claimed emails over SMTP (engagement-api-v3.md, "Email notifications", "Delivery"):
 * each attempt re-reads the email's notifications (those read or deleted since are left out; an
 * email left with nothing, or whose voter is no longer eligible, is dropped unsent), renders
 * the message, hands it to nodemailer and records the outcome. An SMTP 5xx answer fails the
 * email at once; a 4xx answer or a connection failure is retried after the next delay of
 * EMAIL_RETRY_SCHEDULE_SECONDS, and the email is failed once they are used up.
 */
import type { Db } from "../../../db/connect.ts";
import { serviceSecret } from "../../lib/data/service-secrets.ts";
import { signUnsubscribeToken } from "../../lib/rules/unsubscribe-token.ts";
import {
  type ClaimedEmail,
  claimDueEmails,
  type EmailContext,
  type EmailOutcome,
  eligible,
  loadEmailContexts,
  recordOutcome,
} from "./emails.repository.ts";
import { emailSubject, type RenderedEmail, renderEmail } from "./render.ts";

/** What the sender needs of a nodemailer transporter (tests may pass their own). */
export interface MailTransport {
  sendMail(message: RenderedEmail): Promise<unknown>;
}

export interface SendOptions {
  /** PUBLIC_BASE_URL (publicBaseUrl(config)), without a trailing slash. */
  publicBaseUrl: string;
  /** Delays in seconds before each retry (EMAIL_RETRY_SCHEDULE_SECONDS). */
  retrySchedule: readonly number[];
  /** Emails claimed and sent at a time. */
  concurrency: number;
  /** Called with each error that could not be recorded (logging). */
  onError?: (error: unknown, emailId: string) => void;
}

/** What SMTP answered, as far as retrying goes: nodemailer sets `responseCode` on SMTP replies. */
export function isPermanentFailure(error: unknown): boolean {
  const code = (error as { responseCode?: unknown } | null)?.responseCode;
  return typeof code === "number" && code >= 500 && code < 600;
}

/** The error's text for last_error: the SMTP reply or the connection error, at most 500 characters. */
export function describeError(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.replace(/\s+/g, " ").trim().slice(0, 500) || "unknown error";
}

/** The unsubscribe URL of a voter of a project (engagement-api-v3.md, "Message"). */
export function unsubscribeUrl(baseUrl: string, secret: string, slug: string, voterPublicId: string): string {
  return `${baseUrl}/api/v3/unsubscribe/${signUnsubscribeToken(secret, slug, voterPublicId)}`;
}

/**
 * Makes one attempt of `claimed` with its `context` (undefined: its voter is gone) and returns
 * its outcome (nothing recorded yet); `now` is the clock.
 */
async function attempt(
  db: Db,
  transport: MailTransport,
  claimed: ClaimedEmail,
  context: EmailContext | undefined,
  now: () => Date,
  options: SendOptions,
): Promise<EmailOutcome> {
  const { row } = claimed;
  if (!context || context.notifications.length === 0) return { kind: "dropped" };
  const settings = context.project.notification_settings;
  if (!eligible(settings, context.voter) || context.voter.email === null || settings.from_address === null) return { kind: "dropped" };
  const secret = await serviceSecret(db, "unsubscribe");
  const message = renderEmail({
    project: { name: context.project.name, statusNames: context.project.status_names },
    sender: {
      fromName: settings.from_name ?? context.project.name,
      fromAddress: settings.from_address,
      replyTo: settings.reply_to,
      boardUrl: settings.board_url,
      changelogUrl: settings.changelog_url ?? null,
    },
    to: context.voter.email,
    notifications: context.notifications,
    messageId: row.message_id,
    unsubscribeUrl: unsubscribeUrl(options.publicBaseUrl, secret, context.project.slug, context.voter.public_id),
  });
  const sent = {
    to: context.voter.email,
    subject: emailSubject(context.project.name, context.notifications),
    notificationIds: context.notifications.map((notification) => notification.id),
  };
  try {
    await transport.sendMail(message);
    return { kind: "sent", at: now(), ...sent };
  } catch (error) {
    const text = describeError(error);
    const delay = options.retrySchedule[row.attempts];
    const at = now();
    if (isPermanentFailure(error) || delay === undefined) return { kind: "failed", at, error: text, ...sent };
    return { kind: "retry", at, error: text, nextAttemptAt: new Date(at.getTime() + delay * 1000), ...sent };
  }
}

/**
 * Claims the emails due by `now` (up to `options.concurrency` at a time, until none is left),
 * sends each and records its outcome. Returns the counts of this pass. An error recording one
 * email goes to `onError`; that email's claim stays and it is due again when its lease ends.
 */
export async function sendDueEmails(
  db: Db,
  transport: MailTransport,
  now: () => Date,
  options: SendOptions,
): Promise<{ sent: number; retried: number; failed: number; dropped: number }> {
  const counts = { sent: 0, retried: 0, failed: 0, dropped: 0 };
  for (;;) {
    const claimed = await claimDueEmails(db, now(), options.concurrency);
    if (claimed.length === 0) return counts;
    const contexts = await loadEmailContexts(
      db,
      claimed.map((email) => email.row),
    );
    await Promise.all(
      claimed.map(async (email) => {
        try {
          const outcome = await attempt(db, transport, email, contexts.get(email.row.id), now, options);
          if (!(await recordOutcome(db, email, outcome))) return;
          if (outcome.kind === "sent") counts.sent++;
          else if (outcome.kind === "retry") counts.retried++;
          else if (outcome.kind === "failed") counts.failed++;
          else counts.dropped++;
        } catch (error) {
          options.onError?.(error, email.row.id);
        }
      }),
    );
    if (claimed.length < options.concurrency) return counts;
  }
}
