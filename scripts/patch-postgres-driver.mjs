#!/usr/bin/env node
/**
 * Postinstall: fixes three defects of the `postgres` driver 3.4.9 (upstream porsager/postgres
 * issues #1154, #1208 and the poisoned write timer; no release has the fix yet) that take the API
 * down when the database dies mid-query. Found by the resilience suite (test/resilience,
 * "Postgres killed mid-write"): the whole server process crashed with
 * `TypeError: Cannot read properties of null (reading 'write')` at connection.js nextWrite.
 *
 * 1. A reserved connection (kysely-postgres-js reserves one per query and per transaction) that
 *    closed keeps accepting queries: kysely's ROLLBACK after the failed statement is written to
 *    a null socket from a setImmediate and throws where nothing can catch it. Now a query on a
 *    reservation whose connection closed is rejected with CONNECTION_CLOSED, and releasing such a
 *    reservation leaves the connection with the pool (which reconnects it) instead of handing the
 *    dead connection out again as open.
 * 2. closed()/terminate() cancel the pending write but keep the timer handle and the buffered
 *    bytes, so the reconnected connection never flushes again (every query on it hangs until
 *    connect_timeout). Now both are reset.
 * 3. nextWrite() on a closed socket rejects the waiting queries instead of throwing.
 * 4. A reserve request waiting while a connection closed was taken out of the queue as that
 *    connection's reconnect request; when the reconnect succeeded it was dropped, and the
 *    request (a kysely query or transaction, so an HTTP request) hung forever. And a reserve
 *    request rejected by a failed connect stayed queued, later took a connection and leaked it.
 *    Now a reserve request stays queued until served or rejected, and leaves it when rejected.
 *
 * Idempotent; exact-text replacements; prints a warning and changes nothing when the driver's
 * text differs (a newer version: check whether it still needs this).
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const MARK = "fb-patch";
const root = join(dirname(fileURLToPath(import.meta.url)), "..", "node_modules", "postgres");

const connectionEdits = [
  [
    "  function nextWrite(fn) {\n    const x = socket.write(chunk, fn)\n",
    "  function nextWrite(fn) {\n    if (!socket) { // fb-patch: the socket closed before this write went out\n      nextWriteTimer !== null && clearImmediate(nextWriteTimer)\n      chunk = nextWriteTimer = null\n      error(Errors.connection('CONNECTION_CLOSED', options))\n      return true\n    }\n    const x = socket.write(chunk, fn)\n",
  ],
  [
    "    incomings = null\n    clearImmediate(nextWriteTimer)\n",
    "    incomings = null\n    clearImmediate(nextWriteTimer)\n    chunk = nextWriteTimer = null // fb-patch: a reconnect must be able to write again\n",
  ],
  [
    "    clearImmediate(nextWriteTimer)\n    if (socket) {\n",
    "    clearImmediate(nextWriteTimer)\n    chunk = nextWriteTimer = null // fb-patch\n    if (socket) {\n",
  ],
];

const indexEdits = [
  [
    "        const query = { reserve: resolve, reject }\n",
    "        // fb-patch: settles once; a request rejected while queued leaves the queue\n" +
    "        const query = {\n" +
    "          reserve: c => !query.settled && (query.settled = true, resolve(c), true),\n" +
    "          reject: e => { if (query.settled) return; query.settled = true; queries.remove(query); reject(e) }\n" +
    "        }\n",
  ],
  [
    "      if (query.reserve)\n        return query.reserve(c)\n",
    "      if (query.reserve) // fb-patch: a request settled meanwhile takes no connection\n        return query.reserve(c) || onopen(c)\n",
  ],
  [
    "    queries.length && connect(c, queries.shift())\n  }\n",
    "    if (queries.length) {\n" +
    "      const query = queries.shift()\n" +
    "      // fb-patch: a reserve request stays queued: a successful reconnect drops its initial\n" +
    "      // reserve request and serves the queue instead, so it must still be there\n" +
    "      query.reserve && queries.push(query)\n" +
    "      connect(c, query)\n" +
    "    }\n  }\n",
  ],
  [
    "    move(c, reserved)\n    c.reserved = () => queue.length\n",
    "    move(c, reserved)\n    const reservation = c.reserved = () => queue.length\n",
  ],
  [
    "    sql.release = () => {\n      c.reserved = null\n      onopen(c)\n    }\n",
    "    sql.release = () => {\n      if (c.reserved !== reservation) return // fb-patch: closed meanwhile; the pool has it back\n      c.reserved = null\n      onopen(c)\n    }\n",
  ],
  [
    "    function handler(q) {\n      c.queue === full\n        ? queue.push(q)\n        : c.execute(q) || move(c, full)\n    }\n",
    "    function handler(q) {\n      if (c.reserved !== reservation) // fb-patch: the connection closed since it was reserved\n        return q.reject(Errors.connection('CONNECTION_CLOSED', options))\n      c.queue === full\n        ? queue.push(q)\n        : c.execute(q) || move(c, full)\n    }\n",
  ],
];

function patch(file, edits) {
  const path = join(root, file);
  if (!existsSync(path)) return;
  let text = readFileSync(path, "utf8");
  if (text.includes(MARK)) return;
  for (const [from, to] of edits) {
    if (!text.includes(from)) {
      console.warn(`patch-postgres-driver: ${file} differs from postgres 3.4.9; left unpatched`);
      return;
    }
    text = text.replace(from, to);
  }
  writeFileSync(path, text);
}

for (const dir of ["src", "cjs/src", "cf/src"]) {
  patch(`${dir}/connection.js`, connectionEdits);
  patch(`${dir}/index.js`, indexEdits);
}
