/**
 * The periodic tasks every webhook worker runs besides deliveries (src/events/webhook-worker.ts):
 * today the scheduled publication of releases, which records `release.published` exactly once
 * when a release's `published_at` arrives, whichever instance runs first (owner-api-v3.md,
 * "Events"; the claim is in changelog.publication.ts). An event is recorded at most
 * RELEASE_PUBLICATION_INTERVAL_SECONDS after its time; the release itself is public at its time
 * exactly (src/lib/data/next-publication.ts). Also the notification consumer, which turns new
 * events into inbox notifications within NOTIFICATION_POLL_INTERVAL_MS (engagement-api-v3.md,
 * "Notifications": within 10 s; any number of instances, src/events/notification-consumer.ts),
 * and the hourly deletion of notifications older than 90 days.
 */

import { consumePendingNotifications, deleteExpiredNotifications, NOTIFICATION_POLL_INTERVAL_MS } from "./events/notification-consumer.ts";
import type { PeriodicTask } from "./events/webhook-worker.ts";
import { publishDueReleaseEvents, RELEASE_PUBLICATION_INTERVAL_SECONDS } from "./routes/changelog/changelog.publication.ts";

export const BACKGROUND_TASKS: readonly PeriodicTask[] = [
  {
    name: "release publication",
    intervalMs: RELEASE_PUBLICATION_INTERVAL_SECONDS * 1000,
    async run(deps) {
      await publishDueReleaseEvents(deps.db, new Date());
    },
  },
  {
    name: "notifications",
    intervalMs: NOTIFICATION_POLL_INTERVAL_MS,
    async run(deps) {
      await consumePendingNotifications(deps.db);
    },
  },
  {
    name: "notification retention",
    intervalMs: 3_600_000,
    async run(deps) {
      await deleteExpiredNotifications(deps.db, new Date());
    },
  },
];
