/**
 * Canny's API read directly (imports-v3.md, "Sources", Canny; rule 8 "No secrets taken"): the
 * process that received POST /imports fetches the export right after answering 202, holding the
 * job's lease (renewed meanwhile, so no runner claims the job before its file exists), stores
 * the zip as the job's file, gives the lease back and forgets the key. Requests go to
 * CANNY_API_URL through the webhook address guard. The key is never stored or logged: if this
 * process stops before the file is stored, the job's lease runs out and the runner that claims
 * it fails it, saying to send the request again (imports.job.ts).
 */

import { recordEvents } from "../../events/outbox.ts";
import { WebhookUrlRefused } from "../../events/url-guard.ts";
import type { AppDeps } from "../../lib/http/context.ts";
import { holdLease } from "./imports.job.ts";
import { toImport } from "./imports.mapper.ts";
import { finishImport, type ImportRow, storeFetchedFile } from "./imports.repository.ts";
import { createGuardedFetch, fetchCannyExport } from "./readers/index.ts";

/** Fetches, stores and lets the runners take job `row` (see the module's comment); never throws. */
export function fetchCannyInBackground(deps: AppDeps, row: ImportRow, token: string, apiKey: string): void {
  const { db, config, logger } = deps;
  const lease = holdLease(deps, row.id, token);
  const run = async () => {
    try {
      const bytes = await fetchCannyExport({
        apiKey,
        baseUrl: config.CANNY_API_URL,
        fetch: createGuardedFetch({ allowPrivate: config.WEBHOOK_ALLOW_PRIVATE_URLS }),
      });
      await storeFetchedFile(db, row.id, token, bytes);
    } catch (error) {
      // The reader's errors name api_key and never carry the key; the guard's name the address.
      const message =
        error instanceof WebhookUrlRefused
          ? `CANNY_API_URL: ${error.message}`
          : `api_key: ${error instanceof Error ? error.message : "Canny's API could not be read"}`;
      logger.warn({ import_id: row.id, reason: message }, "import: Canny export not fetched");
      await db.transaction().execute(async (trx) => {
        const ended = await finishImport(trx, row.id, token, {
          status: "failed",
          counts: null,
          warnings: [],
          warningCount: 0,
          error: { code: "validation_failed", field: "api_key", message },
          progress: { done: 0, total: null },
        });
        if (ended && !ended.dry_run) await recordEvents(trx, ended.project_id, [{ type: "import.completed", object: toImport(ended) }]);
      });
    } finally {
      lease.stop();
    }
  };
  run().catch((error) => logger.error({ err: error, import_id: row.id }, "import: Canny fetch could not be recorded"));
}
