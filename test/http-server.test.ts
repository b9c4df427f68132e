/**
 * createServer (src/http-server.ts) in process: start-up on a real port, and the graceful
 * shutdown the operator relies on (docs/operations.md): in-flight requests finish, new
 * connections are refused, kept-alive connections are closed once idle (stop() resolves only
 * then), the deps are closed once, and a request still running when SHUTDOWN_GRACE_SECONDS runs
 * out is cut.
 */
import { createServer as createNetServer } from "node:net";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import type { OpenedDeps } from "../src/deps.ts";
import { createServer } from "../src/http-server.ts";
import { createTestContext, type TestContext } from "./support/harness.ts";

let ctx: TestContext;
let slug: string;
let key: string;

beforeAll(async () => {
  ctx = await createTestContext({ PORT: "0", HOST: "127.0.0.1", WEBHOOK_WORKER: "off", SHUTDOWN_GRACE_SECONDS: "1" });
  ({ slug, secretKey: key } = await ctx.importProject());
});
afterAll(() => ctx.close());

/** The test context's deps as the server owns them: close() is counted, not performed (the context closes them). */
function serverDeps(): OpenedDeps & { close: ReturnType<typeof vi.fn> } {
  return { ...ctx.deps, databaseCreated: false, close: vi.fn(async () => {}) } as OpenedDeps & { close: ReturnType<typeof vi.fn> };
}

/** Holds every keyed request at its rate-limit step until release() (the step a keyed read takes first). */
function gateKeyedRequests(deps: OpenedDeps) {
  let release: () => void = () => {};
  const opened = new Promise<void>((resolve) => {
    release = resolve;
  });
  let arrived: () => void = () => {};
  const arrival = new Promise<void>((resolve) => {
    arrived = resolve;
  });
  const consume = deps.rateLimiter.consumeReadingRevisions.bind(deps.rateLimiter);
  deps.rateLimiter = Object.assign(Object.create(deps.rateLimiter), {
    consumeReadingRevisions: async (...args: Parameters<typeof consume>) => {
      arrived();
      await opened;
      return consume(...args);
    },
  });
  return { arrival, release };
}

describe("createServer", () => {
  it("listens on the configured address and answers over HTTP; stop() closes the deps once", async () => {
    const deps = serverDeps();
    const server = createServer(deps);
    const address = await server.start();
    expect(address.address).toBe("127.0.0.1");
    expect(address.port).toBeGreaterThan(0);
    const health = await fetch(`http://127.0.0.1:${address.port}/api/v3/health`);
    expect(health.status).toBe(200);
    expect(await health.json()).toEqual({ data: { status: "ok", version: "3" }, meta: null, error: null });

    expect(await server.stop()).toEqual({ graceful: true });
    expect(await server.stop()).toEqual({ graceful: true });
    expect(deps.close).toHaveBeenCalledTimes(1);
    await expect(fetch(`http://127.0.0.1:${address.port}/api/v3/health`)).rejects.toThrow();
  });

  it("lets an in-flight request finish, refuses new connections meanwhile, then closes its connection", async () => {
    const deps = serverDeps();
    const gate = gateKeyedRequests(deps);
    const server = createServer(deps);
    const { port } = await server.start();
    const inFlight = fetch(`http://127.0.0.1:${port}/api/v3/projects/${slug}/features`, { headers: { "X-API-Key": key } });
    await gate.arrival;

    const stopped = server.stop();
    await expect(fetch(`http://127.0.0.1:${port}/api/v3/health`)).rejects.toThrow();
    gate.release();
    const answer = await inFlight;
    expect(answer.status).toBe(200);
    expect((await answer.json()).error).toBeNull();
    expect(await stopped).toEqual({ graceful: true });
    expect(deps.close).toHaveBeenCalledTimes(1);
  });

  it("cuts a request still running when the grace period runs out", async () => {
    const deps = serverDeps();
    const gate = gateKeyedRequests(deps);
    const server = createServer(deps);
    const { port } = await server.start();
    const inFlight = fetch(`http://127.0.0.1:${port}/api/v3/projects/${slug}/features`, { headers: { "X-API-Key": key } }).then(
      () => "answered",
      () => "cut",
    );
    await gate.arrival;
    const started = performance.now();
    expect(await server.stop()).toEqual({ graceful: false });
    // SHUTDOWN_GRACE_SECONDS=1.
    expect(performance.now() - started).toBeGreaterThanOrEqual(950);
    expect(await inFlight).toBe("cut");
    gate.release();
  });

  it("rejects start() with the listen error when the port is taken", async () => {
    const taken = createNetServer();
    await new Promise<void>((resolve) => taken.listen(0, "127.0.0.1", resolve));
    const port = (taken.address() as { port: number }).port;
    const deps = serverDeps();
    deps.config = { ...deps.config, PORT: port };
    try {
      await expect(createServer(deps).start()).rejects.toMatchObject({ code: "EADDRINUSE" });
    } finally {
      await new Promise<void>((resolve) => taken.close(() => resolve()));
    }
  });
});
