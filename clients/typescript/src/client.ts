/**
 * createClient: one typed method per operation of the OpenAPI document, named by its operationId
 * (docs/contract/clients-v3.md, "The TypeScript client": "One entry point", "Pagination").
 * The methods call the SDK functions @hey-api/openapi-ts generates (./generated/sdk.gen.ts)
 * through the transport of ./transport.ts.
 */
import { createConfig, createClient as createSdkClient } from "./generated/client/index.js";
import { IDEMPOTENT_OPERATIONS, type Operations } from "./generated/operations.gen.js";
import * as sdk from "./generated/sdk.gen.js";
import type { Meta } from "./generated/types.gen.js";
import { createTransport, DEFAULT_RETRY, type RetryOptions } from "./transport.js";

/** Every operationId of the document. */
export type OperationId = keyof Operations;

/** A voter identity: an anonymous token (sent as X-VF-Anon) or an SSO token (sent as X-VF-Token). */
export type Voter = { anonToken: string } | { ssoToken: string };

type DataOf<K extends OperationId> = Operations[K]["data"];

/** The argument of operation K's method: the keys it has of `path`, `query`, `body`, and `idempotencyKey` on writes. */
export type OperationArgs<K extends OperationId> = Pick<DataOf<K>, Extract<keyof DataOf<K>, "path" | "query" | "body">> &
  (Operations[K]["idempotent"] extends true ? { idempotencyKey?: string } : { idempotencyKey?: never });

type SuccessBody<K extends OperationId> = Operations[K]["responses"][keyof Operations[K]["responses"]];

/** An answer without its null `error`: the envelope's `data` and `meta`, or for the few non-envelope answers (feeds, documents) the body as `data` and meta null. */
export type Envelope<B> = B extends { data: infer D; meta: infer M; error: null } ? { data: D; meta: M } : { data: B; meta: null };

/** What operation K's method resolves to. */
export type OperationResult<K extends OperationId> = Envelope<SuccessBody<K>>;

/** Operation K's method: its argument may be left out when none of its keys is required. */
export type OperationMethod<K extends OperationId> =
  Partial<OperationArgs<K>> extends OperationArgs<K>
    ? (args?: OperationArgs<K>) => Promise<OperationResult<K>>
    : (args: OperationArgs<K>) => Promise<OperationResult<K>>;

export interface ClientOptions {
  /** The API's base address, ending in `/api/v3` (for the demo: `http://127.0.0.1:8080/api/v3`). */
  baseUrl: string;
  /** The project's key (secret `fb_sk_` or embed `fb_ek_`), sent as X-API-Key. */
  key: string;
  /** The voter the calls act for; change it later with `setVoter`. */
  voter?: Voter | null;
  /** The fetch to use; defaults to the global one. */
  fetch?: typeof fetch;
  /** Retry policy of transient failures (defaults: 3 extra attempts, 10,000 ms of waiting in all). */
  retry?: RetryOptions;
  /** Send If-None-Match on reads and answer a 304 with the body kept from the last 200. */
  etagCache?: boolean;
}

/** A list operation's method: resolves to a page of items with its Meta. */
type ListMethod<A, T> = (args: A) => Promise<{ data: T[]; meta: Meta }>;

export type FeedbackBoardClient = { [K in OperationId]: OperationMethod<K> } & {
  /** Sets (or with null clears) the voter identity sent with every later call. */
  setVoter(voter: Voter | null): void;
  /**
   * Every item of every page of a list operation, one page asked at a time from
   * `args.query.page` (default 1) until the page's `meta.has_more` is false.
   */
  paginate<A extends { query?: { page?: number } }, T>(method: ListMethod<A, T>, args: A): AsyncIterableIterator<T>;
};

type SdkFunction = (options: Record<string, unknown>) => Promise<{ data: unknown }>;
/** The generated SDK functions by operationId: all of the module's functions. */
const operations = new Map(
  Object.entries(sdk as Record<string, unknown>).filter((entry) => typeof entry[1] === "function") as [OperationId, SdkFunction][],
);

/** The most pages `paginate` asks for: a bound against a server that never says has_more false. */
const MAX_PAGES = 100_000;

/**
 * A client for the API at `options.baseUrl`. Each method sends X-API-Key, the voter's header,
 * and on writes an Idempotency-Key (`args.idempotencyKey`, else a random UUID) kept across its
 * retries; it resolves to `{data, meta}` and throws FeedbackBoardError otherwise.
 * Throws TypeError when `baseUrl` does not end in /api/v3.
 */
export function createClient(options: ClientOptions): FeedbackBoardClient {
  const base = options.baseUrl.replace(/\/+$/, "");
  if (!base.endsWith("/api/v3")) throw new TypeError(`baseUrl must end in /api/v3, got ${options.baseUrl}`);
  // The document's paths carry the /api/v3 prefix themselves.
  const origin = base.slice(0, -"/api/v3".length);
  const fetchImpl = options.fetch ?? ((input: RequestInfo | URL, init?: RequestInit) => globalThis.fetch(input, init));
  const transport = createTransport({
    fetch: fetchImpl,
    retry: { ...DEFAULT_RETRY, ...options.retry },
    etagCache: options.etagCache === true,
  });
  const http = createSdkClient(
    createConfig({
      baseUrl: origin,
      fetch: (input: RequestInfo | URL, init?: RequestInit) =>
        transport(input instanceof Request && !init ? input : new Request(input, init)),
    }),
  );
  let voter: Voter | null = options.voter ?? null;

  const call = async (operationId: OperationId, args: Record<string, unknown> = {}) => {
    const headers: Record<string, string> = { "X-API-Key": options.key };
    if (voter && "anonToken" in voter) headers["X-VF-Anon"] = voter.anonToken;
    if (voter && "ssoToken" in voter) headers["X-VF-Token"] = voter.ssoToken;
    if (IDEMPOTENT_OPERATIONS.has(operationId)) {
      headers["Idempotency-Key"] = typeof args.idempotencyKey === "string" ? args.idempotencyKey : globalThis.crypto.randomUUID();
    }
    const operation = operations.get(operationId)!;
    const { data: body } = await operation({
      client: http,
      path: args.path,
      query: args.query,
      body: args.body,
      headers,
      throwOnError: true,
    });
    if (body !== null && typeof body === "object" && "data" in body && "error" in body && body.error === null) {
      return { data: body.data, meta: "meta" in body ? body.meta : null };
    }
    return { data: body, meta: null };
  };

  const client = {
    setVoter(next: Voter | null) {
      voter = next;
    },
    async *paginate<A extends { query?: { page?: number } }, T>(method: ListMethod<A, T>, args: A): AsyncIterableIterator<T> {
      let page = args.query?.page ?? 1;
      for (let asked = 0; asked < MAX_PAGES; asked++, page++) {
        const answer = await method({ ...args, query: { ...args.query, page } });
        yield* answer.data;
        if (!answer.meta.has_more || answer.data.length === 0) return;
      }
    },
  } as FeedbackBoardClient;
  for (const operationId of operations.keys()) {
    (client as unknown as Record<string, unknown>)[operationId] = (args?: Record<string, unknown>) => call(operationId, args);
  }
  return client;
}
