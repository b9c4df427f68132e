/**
 * Breaking-change check of the OpenAPI document against the last released contract
 * (`npm run openapi:diff`, run by .ci/run after `npm run check`).
 *
 *   tsx scripts/openapi-diff.ts [base] [head]   optic diff base head --check with Optic's
 *       breaking-changes ruleset (openapi/optic-standard.yml); base defaults to the released
 *       contract openapi/released/v3.json, head to openapi/openapi.json. Exit 0 when nothing
 *       breaks a client of base, 1 when something does (Optic prints each breaking change).
 *       It then lists the operations of head that base lacks: additions break no client, but
 *       nothing guards them until they are released. Optic ignores `webhooks`: a webhook of base
 *       that head lacks fails the check here (their bodies are the event schemas GET /events
 *       answers with, which Optic does check).
 *   tsx scripts/openapi-diff.ts --release       `npm run openapi:release`: copies the whole of
 *       openapi/openapi.json (every route: public, owner, billing; components; webhooks) over
 *       openapi/released/v3.json. Run it for a change meant to ship, routes added included, and
 *       commit the baseline in the same pull request so that the review sees it.
 *
 * Optic runs offline: its telemetry (OPTIC_TELEMETRY_LEVEL=off) and update check
 * (NO_UPDATE_NOTIFIER) are switched off.
 */
import { execFile } from "node:child_process";
import { copyFileSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
export const RELEASED = `${root}openapi/released/v3.json`;
export const CURRENT = `${root}openapi/openapi.json`;
const STANDARD = `${root}openapi/optic-standard.yml`;
const OPTIC = `${root}node_modules/.bin/optic`;

/** Runs the check; resolves to Optic's exit status (0 no breaking change, 1 some) and its output. */
export function opticDiff(base: string, head: string): Promise<{ status: number; output: string }> {
  return new Promise((resolve, reject) => {
    execFile(
      OPTIC,
      ["diff", base, head, "--check", "--standard", STANDARD],
      {
        cwd: root,
        encoding: "utf8",
        maxBuffer: 64 * 1024 * 1024,
        env: { ...process.env, OPTIC_TELEMETRY_LEVEL: "off", NO_UPDATE_NOTIFIER: "1" },
      },
      (error, stdout, stderr) => {
        const status = error ? (typeof error.code === "number" ? error.code : undefined) : 0;
        if (status === undefined) reject(error);
        else resolve({ status, output: `${stdout}${stderr}` });
      },
    );
  });
}

const METHODS = ["get", "put", "post", "delete", "options", "head", "patch", "trace"];

/**
 * The operations ("GET /api/v3/ready") of the document at `head` that the one at `base` lacks,
 * webhooks included ("webhook POST ping"), in document order.
 */
export function unreleasedOperations(base: string, head: string): string[] {
  type Items = Record<string, Record<string, unknown>> | undefined;
  const read = (file: string) => JSON.parse(readFileSync(file, "utf8")) as { paths?: Items; webhooks?: Items };
  const [released, current] = [read(base), read(head)];
  const missing = (items: Items, known: Items, label: string) =>
    Object.entries(items ?? {}).flatMap(([path, item]) =>
      METHODS.filter((method) => item[method] !== undefined && known?.[path]?.[method] === undefined).map(
        (method) => `${label}${method.toUpperCase()} ${path}`,
      ),
    );
  return [...missing(current.paths, released.paths, ""), ...missing(current.webhooks, released.webhooks, "webhook ")];
}

/** The webhooks ("POST ping") of the document at `base` that the one at `head` lacks. */
export function removedWebhooks(base: string, head: string): string[] {
  return unreleasedOperations(head, base)
    .filter((operation) => operation.startsWith("webhook "))
    .map((operation) => operation.slice("webhook ".length));
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const args = process.argv.slice(2);
  if (args.includes("--release")) {
    copyFileSync(CURRENT, RELEASED);
    process.stdout.write("openapi/released/v3.json now holds openapi/openapi.json: commit it with the change\n");
  } else {
    const [base, head] = [args[0] ?? RELEASED, args[1] ?? CURRENT];
    const optic = await opticDiff(base, head);
    process.stdout.write(optic.output);
    const removed = removedWebhooks(base, head);
    for (const webhook of removed) process.stdout.write(`openapi:diff: cannot remove webhook ${webhook}\n`);
    const status = optic.status !== 0 ? optic.status : removed.length > 0 ? 1 : 0;
    const unreleased = unreleasedOperations(base, head);
    if (unreleased.length > 0) {
      process.stdout.write(
        `openapi:diff: ${unreleased.length} operation(s) not in the released contract, unguarded until \`npm run openapi:release\`:\n` +
          unreleased.map((operation) => `  ${operation}\n`).join(""),
      );
    }
    if (status !== 0) {
      process.stderr.write(
        "openapi:diff: the document breaks clients of the released contract (above). If the change is " +
          "intended, follow the release procedure in docs/testing.md and run `npm run openapi:release`.\n",
      );
    }
    process.exitCode = status;
  }
}
