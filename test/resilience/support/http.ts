/**
 * A small HTTP client over node:http (keep-alive, per-request timeout, no retries), a bounded
 * load runner and latency percentiles. Only loopback addresses are ever used.
 */
import http from "node:http";

export interface HttpResult {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
  /** Milliseconds from sending to the last byte. */
  ms: number;
  /** Set when no complete response arrived: the error code (ECONNREFUSED, timeout, ...). */
  error?: string;
}

export interface HttpRequest {
  method?: string;
  path: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
  timeoutMs?: number;
}

const agents = new Map<string, http.Agent>();

function agentFor(origin: string): http.Agent {
  let agent = agents.get(origin);
  if (!agent) {
    agent = new http.Agent({ keepAlive: true, maxSockets: 128 });
    agents.set(origin, agent);
  }
  return agent;
}

/** Drops the kept-alive sockets to every server (before and after a server stops). */
export function resetAgents(): void {
  for (const agent of agents.values()) agent.destroy();
  agents.clear();
}

/** One request; never throws: a failure comes back as status 0 with `error`. */
export function send(origin: string, request: HttpRequest, options: { fresh?: boolean } = {}): Promise<HttpResult> {
  const url = new URL(request.path, origin);
  if (!["127.0.0.1", "localhost", "[::1]"].includes(url.hostname)) throw new Error(`refusing non-loopback ${url.hostname}`);
  const started = performance.now();
  const timeoutMs = request.timeoutMs ?? 10_000;
  return new Promise((resolve) => {
    let settled = false;
    const finish = (result: Omit<HttpResult, "ms">) => {
      if (settled) return;
      settled = true;
      resolve({ ...result, ms: performance.now() - started });
    };
    const body = request.body === undefined ? undefined : Buffer.from(request.body);
    const req = http.request(
      url,
      {
        method: request.method ?? "GET",
        headers: {
          ...(body ? { "Content-Type": "application/json", "Content-Length": String(body.length) } : {}),
          ...request.headers,
        },
        agent: options.fresh ? false : agentFor(origin),
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (chunk: Buffer) => chunks.push(chunk));
        res.on("end", () => finish({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString("utf8") }));
        res.on("error", (error: NodeJS.ErrnoException) => finish({ status: 0, headers: {}, text: "", error: error.code ?? error.message }));
        res.on("aborted", () => finish({ status: 0, headers: {}, text: "", error: "aborted" }));
      },
    );
    req.setTimeout(timeoutMs, () => {
      finish({ status: 0, headers: {}, text: "", error: "timeout" });
      req.destroy();
    });
    req.on("error", (error: NodeJS.ErrnoException) => finish({ status: 0, headers: {}, text: "", error: error.code ?? error.message }));
    req.end(body);
  });
}

/** JSON of a result's body, or undefined when it is not JSON. */
export function json(result: HttpResult): any {
  try {
    return JSON.parse(result.text);
  } catch {
    return undefined;
  }
}

/** The value at quantile q (0..1) of `values`, nearest rank. */
export function quantile(values: number[], q: number): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!;
}

export interface LoadSample extends HttpResult {
  /** ms since the load started, when the request was sent. */
  at: number;
  label: string;
  method: string;
  path: string;
}

export interface LoadRun {
  samples: LoadSample[];
  /** performance.now() when the load started (LoadSample.at is relative to it). */
  startedAt: number;
  /** Stops the workers and resolves when the last in-flight request has answered. */
  stop(): Promise<LoadSample[]>;
  /** Resolves when the run ends by its own bounds (maxMs or maxRequests). */
  finished(): Promise<LoadSample[]>;
}

/**
 * Runs `concurrency` workers that send `next(i)` back to back until stop() is called, `maxMs`
 * passes or `maxRequests` were sent (whichever comes first): bounded in time and count.
 */
export function startLoad(
  origin: string,
  next: (i: number) => HttpRequest & { label: string },
  options: { concurrency: number; maxMs: number; maxRequests: number },
): LoadRun {
  const samples: LoadSample[] = [];
  const started = performance.now();
  let stopped = false;
  let sent = 0;
  const worker = async () => {
    while (!stopped && sent < options.maxRequests && performance.now() - started < options.maxMs) {
      const i = sent++;
      const request = next(i);
      const at = performance.now() - started;
      const result = await send(origin, request);
      samples.push({ ...result, at, label: request.label, method: request.method ?? "GET", path: request.path });
    }
  };
  const workers = Array.from({ length: options.concurrency }, worker);
  const done = Promise.all(workers);
  return {
    samples,
    startedAt: started,
    async stop() {
      stopped = true;
      await done;
      return samples;
    },
    async finished() {
      await done;
      return samples;
    },
  };
}
