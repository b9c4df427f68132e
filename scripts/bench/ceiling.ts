/**
 * The bench's ceiling: a bare Hono app on @hono/node-server answering every GET with one fixed
 * JSON body of BODY_BYTES bytes (the size of a features list page). Whatever the real API
 * reaches is compared with this, measured the same way on the same machine.
 *
 * With REDIS_URL set, each request first makes the one Redis round trip every keyed API request
 * makes (the rate limiter's counter + content revision script, src/store/redis.ts): the bound a
 * cached read can reach while the per-request rate limiting on Redis stays in place.
 *
 * Run as a child process: `PORT=... BODY_BYTES=... [REDIS_URL=...] node --import tsx scripts/bench/ceiling.ts`.
 */
import { serve } from "@hono/node-server";
import { Hono } from "hono";
import pino from "pino";
import { connectRedis, RedisRateLimiter } from "../../src/store/redis.ts";

const port = Number(process.env.PORT ?? 18090);
const size = Number(process.env.BODY_BYTES ?? 10_000);
// A valid JSON document of exactly `size` bytes: {"data":"xxxx..."}.
const body = `{"data":"${"x".repeat(Math.max(0, size - 11))}"}`;

const redisUrl = process.env.REDIS_URL;
const limiter = redisUrl
  ? new RedisRateLimiter(connectRedis(redisUrl, 1000, process.env.REDIS_KEY_PREFIX ?? "fbceiling:"), pino({ level: "warn" }))
  : undefined;

const app = new Hono();
app.get("*", async (c) => {
  if (limiter) await limiter.consumeReadingRevisions("ceiling:read", 1_000_000_000, 60, 0);
  return c.body(body, 200, { "Content-Type": "application/json" });
});

serve({ fetch: app.fetch, port, hostname: "127.0.0.1" }, () => {
  process.stdout.write("ready\n");
});
process.on("SIGTERM", () => process.exit(0));
