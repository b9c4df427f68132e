/**
 * The webhook worker of a process (docs/contract/owner-api-v3.md, "Webhooks"): a dispatcher loop
 * that turns new events into deliveries, a delivery loop that claims due deliveries and makes
 * their attempts with at most WEBHOOK_CONCURRENCY under way, and any extra periodic tasks the
 * process registers (`{name, intervalMs, run}`), all stopped together by `stop()`.
 *
 * Waking: the delivery loop sleeps until a Postgres NOTIFY on DELIVERIES_CHANNEL (sent by the
 * dispatcher of any instance, by POST test / redeliver and by re-enabling a webhook), one of its
 * own attempts finishing, or WEBHOOK_POLL_INTERVAL_MS passing. The dispatcher polls every
 * WEBHOOK_POLL_INTERVAL_MS: events are recorded by the write paths without a NOTIFY, which
 * would serialize their commits on Postgres's notification queue lock.
 * Errors (the database away, a bug) are logged and the loops go on after a pause.
 */
import type { Logger } from "pino";
import type { Db } from "../../db/connect.ts";
import type { Config } from "../config.ts";
import { type AttemptOptions, attemptDelivery } from "./attempt.ts";
import { type ClaimedDelivery, claimDueDeliveries, DELIVERIES_CHANNEL } from "./deliveries.repository.ts";
import { dispatchPending } from "./dispatcher.ts";
import type { HostResolver } from "./url-guard.ts";

/** What the worker uses of the process's dependencies. */
export interface WorkerDeps {
  db: Db;
  config: Config;
  logger: Logger;
  /** Subscribes to a NOTIFY channel (DatabaseHandle.listen); without it the worker polls only. */
  listen?: (channel: string, onNotify: () => void) => Promise<() => Promise<void>>;
}

/** A job the worker runs every `intervalMs` (e.g. publishing scheduled releases). */
export interface PeriodicTask {
  name: string;
  intervalMs: number;
  run(deps: WorkerDeps): Promise<void>;
}

export interface WorkerOptions {
  tasks?: readonly PeriodicTask[];
  /** Resolver of webhook hosts (tests inject one). */
  resolve?: HostResolver;
}

/** Seconds a claim lasts: past the attempt's own deadline with room to record its outcome. */
export function leaseSeconds(config: Pick<Config, "WEBHOOK_TIMEOUT_SECONDS">): number {
  return config.WEBHOOK_TIMEOUT_SECONDS * 2 + 5;
}

/** The attempt options the configuration sets. */
export function attemptOptions(config: Config, extra: Partial<AttemptOptions> = {}): AttemptOptions {
  return {
    allowPrivate: config.WEBHOOK_ALLOW_PRIVATE_URLS,
    timeoutSeconds: config.WEBHOOK_TIMEOUT_SECONDS,
    retrySchedule: config.WEBHOOK_RETRY_SCHEDULE_SECONDS,
    disableAfter: config.WEBHOOK_DISABLE_AFTER_FAILURES,
    ...extra,
  };
}

/** A sleep that `wake()` ends early. */
class Alarm {
  private timer: NodeJS.Timeout | undefined;
  private resolve: (() => void) | undefined;
  private pending = false;

  sleep(ms: number): Promise<void> {
    if (this.pending) {
      this.pending = false;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      this.resolve = resolve;
      this.timer = setTimeout(() => this.ring(), ms);
    });
  }

  /** Ends the current sleep, or makes the next one return at once. */
  wake(): void {
    if (this.resolve) this.ring();
    else this.pending = true;
  }

  private ring(): void {
    clearTimeout(this.timer);
    const resolve = this.resolve;
    this.resolve = undefined;
    this.pending = false;
    resolve?.();
  }
}

export class WebhookWorker {
  private stopping = false;
  private readonly deliveryAlarm = new Alarm();
  private readonly dispatchAlarm = new Alarm();
  private readonly taskAlarms: Alarm[] = [];
  private readonly inFlight = new Map<string, { delivery: ClaimedDelivery; done: Promise<void> }>();
  private readonly abort = new AbortController();
  private loops: Promise<void>[] = [];
  private unlisten: (() => Promise<void>) | undefined;

  constructor(
    private readonly deps: WorkerDeps,
    private readonly options: WorkerOptions = {},
  ) {}

  /** Starts the loops (and the NOTIFY subscription when `deps.listen` is given). */
  async start(): Promise<void> {
    if (this.deps.listen) {
      try {
        this.unlisten = await this.deps.listen(DELIVERIES_CHANNEL, () => this.deliveryAlarm.wake());
      } catch (error) {
        this.deps.logger.warn({ err: error }, "webhook worker: no NOTIFY subscription; polling only");
      }
    }
    this.loops = [
      this.loop("dispatch", this.dispatchAlarm, () => this.dispatchRound()),
      this.loop("deliver", this.deliveryAlarm, () => this.deliveryRound()),
      ...(this.options.tasks ?? []).map((task) => {
        const alarm = new Alarm();
        this.taskAlarms.push(alarm);
        const run = async () => {
          await task.run(this.deps);
          return false;
        };
        return this.loop(task.name, alarm, run, task.intervalMs);
      }),
    ];
  }

  /** Looks for new events and due deliveries now instead of at the next poll. */
  wake(): void {
    this.dispatchAlarm.wake();
    this.deliveryAlarm.wake();
  }

  /** Attempts under way in this process. */
  get activeAttempts(): number {
    return this.inFlight.size;
  }

  /**
   * Stops claiming, waits up to `graceMs` for the attempts under way, then cuts the rest short
   * and gives their claims back (due again at once, for another instance), and ends the loops.
   */
  async stop(graceMs = 5000): Promise<void> {
    if (this.stopping) return;
    this.stopping = true;
    this.wake();
    for (const alarm of this.taskAlarms) alarm.wake();
    const attempts = Promise.all([...this.inFlight.values()].map((entry) => entry.done));
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([attempts, new Promise((resolve) => (timer = setTimeout(resolve, graceMs)))]);
    clearTimeout(timer);
    this.abort.abort();
    await attempts;
    await Promise.all(this.loops);
    await this.unlisten?.().catch(() => {});
  }

  private async loop(
    name: string,
    alarm: Alarm,
    round: () => Promise<boolean>,
    intervalMs = this.deps.config.WEBHOOK_POLL_INTERVAL_MS,
  ): Promise<void> {
    while (!this.stopping) {
      let again = false;
      try {
        again = await round();
      } catch (error) {
        if (this.stopping) break;
        this.deps.logger.error({ err: error, task: name }, "webhook worker: round failed; trying again later");
      }
      if (!again && !this.stopping) await alarm.sleep(intervalMs);
    }
  }

  /** One dispatch pass; true when it should run again at once. */
  private async dispatchRound(): Promise<boolean> {
    const result = await dispatchPending(this.deps.db);
    if (result.deliveries > 0) this.deliveryAlarm.wake();
    return false;
  }

  /** Claims what fits in the free slots and starts those attempts; true when a full batch was claimed. */
  private async deliveryRound(): Promise<boolean> {
    const { config } = this.deps;
    const free = config.WEBHOOK_CONCURRENCY - this.inFlight.size;
    if (free <= 0) return false;
    const claimed = await claimDueDeliveries(this.deps.db, {
      limit: free,
      perWebhook: config.WEBHOOK_CONCURRENCY_PER_WEBHOOK,
      leaseSeconds: leaseSeconds(config),
    });
    for (const delivery of claimed) this.startAttempt(delivery);
    return claimed.length === free && !this.stopping;
  }

  private startAttempt(delivery: ClaimedDelivery): void {
    const options = attemptOptions(this.deps.config, {
      signal: this.abort.signal,
      ...(this.options.resolve ? { resolve: this.options.resolve } : {}),
    });
    const done = attemptDelivery(this.deps.db, delivery, options)
      .then((result) => {
        if (result.disabled) this.deps.logger.warn({ webhook_id: delivery.webhook_id, reason: result.disabled }, "webhook disabled");
      })
      .catch((error: unknown) => {
        // The claim stays; the delivery is due again when its lease ends.
        this.deps.logger.error({ err: error, delivery_id: delivery.id }, "webhook attempt could not be recorded");
      })
      .finally(() => {
        this.inFlight.delete(delivery.id);
        this.deliveryAlarm.wake();
      });
    this.inFlight.set(delivery.id, { delivery, done });
  }
}

/** Creates and starts a worker. */
export async function startWebhookWorker(deps: WorkerDeps, options: WorkerOptions = {}): Promise<WebhookWorker> {
  const worker = new WebhookWorker(deps, options);
  await worker.start();
  return worker;
}
