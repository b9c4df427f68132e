/**
 * The bench's ceiling: a bare Hono app on @hono/node-server answering every GET with one fixed
 * JSON body of BODY_BYTES bytes (the size of a features list page). Whatever the real API
 * reaches is compared with this, measured the same way on the same machine.
 * Run as a child process: `PORT=... BODY_BYTES=... node --import tsx scripts/bench/ceiling.ts`.
 */
import { serve } from "@hono/node-server";
import { Hono } from "hono";

const port = Number(process.env.PORT ?? 18090);
const size = Number(process.env.BODY_BYTES ?? 10_000);
// A valid JSON document of exactly `size` bytes: {"data":"xxxx..."}.
const body = `{"data":"${"x".repeat(Math.max(0, size - 11))}"}`;

const app = new Hono();
app.get("*", (c) => c.body(body, 200, { "Content-Type": "application/json" }));

serve({ fetch: app.fetch, port, hostname: "127.0.0.1" }, () => {
  process.stdout.write("ready\n");
});
process.on("SIGTERM", () => process.exit(0));
