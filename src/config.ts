/**
 * Configuration from the environment (docs/architecture.md, "What runs"; the variables:
 * docs/operations.md, "Configuration"). `parseConfig` has no side
 * effects: it validates `env` and returns a frozen Config, or throws a ZodError naming the bad
 * variable.
 */
import { z } from "zod";

const optionalUrl = z
  .string()
  .trim()
  .transform((value) => (value === "" ? undefined : value))
  .optional();

function isSmtpUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return (url.protocol === "smtp:" || url.protocol === "smtps:") && url.hostname !== "" && url.hash === "";
  } catch {
    return false;
  }
}

function isHttpBase(value: string): boolean {
  try {
    const url = new URL(value);
    return (url.protocol === "http:" || url.protocol === "https:") && url.search === "" && url.hash === "";
  } catch {
    return false;
  }
}

const perMinute = (fallback: number) => z.coerce.number().int().positive().default(fallback);

/** A retry schedule: seconds, comma-separated, each >= 0, frozen into an array (`fallback` when unset). */
function retrySchedule(fallback: string) {
  return z
    .string()
    .default(fallback)
    .transform((text, context) => {
      const delays = text.split(",").map((part) => Number(part.trim()));
      if (text.trim() === "" || delays.some((delay) => !Number.isFinite(delay) || delay < 0)) {
        context.addIssue({ code: "custom", message: "must be non-negative numbers of seconds separated by commas" });
        return z.NEVER;
      }
      return Object.freeze(delays);
    });
}

const configSchema = z.object({
  DATABASE_URL: optionalUrl,
  REDIS_URL: optionalUrl,
  /** Prefix of every Redis key, so that several deployments (or test runs) can share a server. */
  REDIS_KEY_PREFIX: z.string().default("fb:"),
  /** Where PGlite keeps its files when DATABASE_URL is unset; "memory://" keeps nothing. */
  PGLITE_DIR: z.string().default("./data"),
  PORT: z.coerce.number().int().min(0).max(65535).default(8080),
  /**
   * Interface to listen on. Loopback by default: the demo project's keys are public, so a fresh
   * `npm start` must not serve the network; the container image sets 0.0.0.0 (and DEMO=off).
   */
  HOST: z.string().default("127.0.0.1"),
  /**
   * Seconds a client may take to send a request's headers, and its whole request (headers and
   * body), before the connection is cut (408 when nothing was answered on it yet). 30 s carries
   * the one-megabyte body limit at about 300 kbit/s (a poor mobile link); Node's own defaults
   * (60 s and 300 s) let half-sent bodies hold sockets for five minutes.
   */
  HTTP_HEADERS_TIMEOUT_SECONDS: z.coerce.number().positive().default(10),
  HTTP_REQUEST_TIMEOUT_SECONDS: z.coerce.number().positive().default(30),
  /**
   * Seconds an idle keep-alive connection stays open. Behind a proxy or load balancer that
   * reuses connections, set it above the proxy's own idle timeout.
   */
  HTTP_KEEP_ALIVE_TIMEOUT_SECONDS: z.coerce.number().positive().default(5),
  LOG_LEVEL: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
  /** Contract "Limits": reads and writes per API key per minute. */
  RATE_LIMIT_READS_PER_MINUTE: perMinute(1200),
  RATE_LIMIT_WRITES_PER_MINUTE: perMinute(300),
  /** Embed keys serve a whole audience from page source: their own, larger budgets. */
  RATE_LIMIT_EMBED_READS_PER_MINUTE: perMinute(6000),
  RATE_LIMIT_EMBED_WRITES_PER_MINUTE: perMinute(600),
  /**
   * Billing webhook deliveries (POST /billing/stripe|paddle/{slug}) per project per minute, both
   * systems together: the routes take no key, so this bounds what a flood can make the service
   * verify and write. Stripe and Paddle retry a 429 later, so a burst past it is delayed, not lost.
   */
  RATE_LIMIT_BILLING_PER_MINUTE: perMinute(600),
  /** Per-process fallback budgets used while Redis does not answer (fail open, not unlimited). */
  RATE_LIMIT_FALLBACK_FACTOR: z.coerce.number().positive().default(1),
  /** Milliseconds a rate-limit Redis command may take before the request goes on without it. */
  REDIS_COMMAND_TIMEOUT_MS: z.coerce.number().int().positive().default(250),
  /**
   * Milliseconds an idempotency command (claim, record, release) may take. Longer than the rate
   * limit's: there is no fallback for it, so a timeout refuses the keyed write (409/500) instead
   * of degrading it, and a reply that arrives late (a busy event loop, a slow Redis) is wasted.
   */
  REDIS_IDEMPOTENCY_TIMEOUT_MS: z.coerce.number().int().positive().default(1000),
  /** Seconds to let in-flight requests finish after SIGTERM. */
  SHUTDOWN_GRACE_SECONDS: z.coerce.number().positive().default(10),
  /** Seconds a key lookup and project settings stay cached in process. */
  PROJECT_CACHE_SECONDS: z.coerce.number().min(0).default(5),
  /**
   * Seconds an anonymous read stays in the shared read cache (0 turns it off). Writes make a
   * cached read unreachable at once (content revisions); this bounds only what no write
   * announces: a release reaching its publish time, an admin change whose notification was lost.
   */
  READ_CACHE_SECONDS: z.coerce.number().min(0).default(5),
  /**
   * Megabytes of response bodies, and of the FeatureObjects kept for listing builds, the shared
   * read cache may hold per process.
   */
  READ_CACHE_MB: z.coerce.number().positive().default(32),
  /**
   * Webhook URLs may be http: and may resolve to private, loopback, link-local and other
   * non-public addresses (owner-api-v3.md, "Webhooks"). Only for local development and tests:
   * with it, any owner can make the server call into its own network.
   */
  WEBHOOK_ALLOW_PRIVATE_URLS: z
    .enum(["true", "false"])
    .default("false")
    .transform((value) => value === "true"),
  /**
   * Whether this server process runs the webhook dispatcher, delivery worker and periodic tasks
   * (scheduled releases, the notification consumer); `npm run worker` runs them alone.
   */
  WEBHOOK_WORKER: z.enum(["on", "off"]).default("on"),
  /**
   * Seconds an import runner's claim lasts (imports-v3.md, "How an import runs"); renewed every
   * third of it while the job runs, so a runner that dies frees its job within this time.
   */
  IMPORT_LEASE_SECONDS: z.coerce.number().int().min(2).max(3600).default(60),
  /** Milliseconds between an idle import runner's looks for a queued import. */
  IMPORT_POLL_INTERVAL_MS: z.coerce.number().int().min(10).max(600_000).default(1000),
  /** Webhook requests one process makes at a time. */
  WEBHOOK_CONCURRENCY: z.coerce.number().int().min(1).max(256).default(16),
  /**
   * Requests under way to one webhook at a time, over every process (about: two processes
   * claiming at the same instant may each start this many), so that a hanging receiver cannot
   * take every slot and hold up the others.
   */
  WEBHOOK_CONCURRENCY_PER_WEBHOOK: z.coerce.number().int().min(1).max(256).default(4),
  /**
   * Milliseconds between looks for new events and due deliveries when nothing wakes the worker
   * sooner (a Postgres NOTIFY from the dispatcher, a test or redeliver request, a finished attempt).
   */
  WEBHOOK_POLL_INTERVAL_MS: z.coerce.number().int().min(10).max(60_000).default(1000),
  /** Seconds a webhook request may take (resolving, connecting, the answer's headers). The spec's 15 s. */
  WEBHOOK_TIMEOUT_SECONDS: z.coerce.number().positive().max(120).default(15),
  /**
   * Delays before each retry of a failed delivery attempt, in seconds, comma-separated (each
   * with +-10 % jitter); once they are used up the delivery is failed. The spec's schedule:
   * about 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h (8 attempts in all). Tests shorten it.
   */
  WEBHOOK_RETRY_SCHEDULE_SECONDS: retrySchedule("5,300,1800,7200,18000,36000,36000"),
  /** Deliveries ending failed in a row (docs/webhooks.md) that disable a webhook (`failing`). The spec's 100. */
  WEBHOOK_DISABLE_AFTER_FAILURES: z.coerce.number().int().min(1).default(100),
  /**
   * Postgres session bounds of the server's and the worker's connections, in milliseconds (0 =
   * none; PGlite has one connection and no other session to wait for, so they do not apply to
   * it). A write waiting for a row or advisory lock gives up after DATABASE_LOCK_TIMEOUT_MS, any
   * statement after DATABASE_STATEMENT_TIMEOUT_MS, and a session that stays idle inside a
   * transaction (a frozen or stalled instance holding locks) is ended by Postgres after
   * DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS, which releases its locks. The request that hits one
   * answers 500 internal with nothing written (docs/operations.md, "Database time limits").
   */
  DATABASE_LOCK_TIMEOUT_MS: z.coerce.number().int().min(0).default(5000),
  DATABASE_STATEMENT_TIMEOUT_MS: z.coerce.number().int().min(0).default(15_000),
  DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS: z.coerce.number().int().min(0).default(10_000),
  /**
   * Statement bound of the admin command line (import, export, keys, demo) and of migrations,
   * in milliseconds; 0 (the default) is none: an `import --replace` of a large project and a
   * migration rewriting a table take as long as they take. They wait for locks without bound
   * too (a replace waits for the writes under way; a peer's idle transaction is ended by
   * DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS).
   */
  DATABASE_ADMIN_STATEMENT_TIMEOUT_MS: z.coerce.number().int().min(0).default(0),
  /**
   * The SMTP server emails leave through (engagement-api-v3.md, "Email notifications";
   * docs/email.md): `smtp://` or `smtps://`, optional `user:password@`, host, optional port.
   * Unset: no email is sent. Anything else is refused at start.
   */
  SMTP_URL: optionalUrl.pipe(
    z.string().refine(isSmtpUrl, { message: "must be smtp://[user:password@]host[:port] or smtps://..." }).optional(),
  ),
  /**
   * The service's public address, used in the links it sends (unsubscribe). Default
   * http://{HOST}:{PORT} (src/lib/http/public-base-url.ts).
   */
  /**
   * Base of Canny's API an import with `api_key` reads (imports-v3.md, "Sources"); requests go
   * through the webhooks' address guard, so a private address needs WEBHOOK_ALLOW_PRIVATE_URLS.
   */
  CANNY_API_URL: z
    .string()
    .trim()
    .default("https://canny.io/api")
    .refine(isHttpBase, { message: "must be an absolute http(s) URL without query or fragment" }),
  PUBLIC_BASE_URL: optionalUrl.pipe(
    z.string().refine(isHttpBase, { message: "must be an absolute http(s) URL without query or fragment" }).optional(),
  ),
  /**
   * Delays before each retry of an email whose SMTP server answered 4xx or could not be reached,
   * in seconds, comma-separated; once used up the email is failed. The spec's schedule: about 1,
   * 5 and 30 minutes, 2 and 6 hours. Tests shorten it.
   */
  EMAIL_RETRY_SCHEDULE_SECONDS: retrySchedule("60,300,1800,7200,21600"),
  /** Milliseconds between the email worker's looks for digests to close and emails to send (30 s bound: docs/email.md). */
  EMAIL_POLL_INTERVAL_MS: z.coerce.number().int().min(10).max(20_000).default(5000),
  /** SMTP connections one process keeps open at a time (nodemailer's pool). */
  EMAIL_CONCURRENCY: z.coerce.number().int().min(1).max(64).default(4),
  /**
   * `auto` loads the bundled demo project when the database holds no project; `off` never does.
   * The demo's published keys are served on loopback only: with HOST off loopback, the server
   * replaces them with random keys at start and prints those once (src/admin/demo-bootstrap.ts).
   * `public` loads the demo like `auto` and keeps its published keys on any interface (a
   * throwaway sandbox only: anyone who reaches the port owns the demo project).
   */
  DEMO: z.enum(["auto", "off", "public"]).default("auto"),
});

export type Config = Readonly<z.infer<typeof configSchema>>;

// Node refuses a headers timeout longer than the request timeout (the request includes them).
const checkedSchema = configSchema.refine((config) => config.HTTP_HEADERS_TIMEOUT_SECONDS <= config.HTTP_REQUEST_TIMEOUT_SECONDS, {
  path: ["HTTP_HEADERS_TIMEOUT_SECONDS"],
  message: "must not exceed HTTP_REQUEST_TIMEOUT_SECONDS",
});

/** Validates the environment; throws ZodError on a bad value. */
export function parseConfig(env: Record<string, string | undefined>): Config {
  return Object.freeze(checkedSchema.parse(env));
}
