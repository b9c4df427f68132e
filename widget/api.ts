/**
 * The widget's client of the public routes (docs/contract/feedback-board-api-v3.md, "Endpoints",
 * "Authentication", "Limits"; docs/contract/clients-v3.md, "What it shows and does").
 *
 * - Every request carries the embed key as X-API-Key and the voter as X-VF-Token (an SSO token,
 *   which outranks) or X-VF-Anon (the anonymous token kept in localStorage under
 *   `feedback-board:{project}:anon`).
 * - A read answered 429 waits the Retry-After seconds (at most 30) and tries again, twice at most.
 * - A write carries an Idempotency-Key and is never retried with another one; the only retry is
 *   after a refused stored anonymous token (401 identity_invalid): a new identity is minted and
 *   the same write sent again with the same key.
 */
import type { Identity, Meta } from "./types.ts";

/** A refusal of the API (its error object) or a network failure (status 0, code network_error). */
export class BoardError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly status: number,
    readonly field: string | null = null,
  ) {
    super(message);
  }
}

export interface ApiOptions {
  /** Base address ending in /api/v3. */
  base: string;
  project: string;
  key: string;
  /** The SSO token given by the page (attribute `sso-token` or identify()), or null. */
  ssoToken: string | null;
}

export interface Page<T> {
  data: T;
  meta: Meta | null;
}

type Query = Record<string, string | number | boolean | undefined | null | (string | number)[]>;

const READ_RETRIES = 2;
const MAX_WAIT_SECONDS = 30;

/** localStorage when the page allows it; a throwing or absent store acts as an empty one. */
const storage = {
  get(name: string): string | null {
    try {
      return globalThis.localStorage?.getItem(name) ?? null;
    } catch {
      return null;
    }
  },
  set(name: string, value: string | null): void {
    try {
      if (value === null) globalThis.localStorage?.removeItem(name);
      else globalThis.localStorage?.setItem(name, value);
    } catch {
      // Storage refused (private mode, sandbox): the identity lasts for this page only.
    }
  },
};

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function idempotencyKey(): string {
  if (typeof crypto !== "undefined" && "randomUUID" in crypto) return crypto.randomUUID();
  return `fbw-${Date.now().toString(36)}-${Math.random().toString(36).slice(2)}`;
}

/** Whether `key` is a secret key, which must never reach a browser (clients-v3.md, attribute `key`). */
export function isSecretKey(key: string): boolean {
  return key.startsWith("fb_sk_");
}

/** How long a prefetched answer may wait for the read that takes it, in ms. */
const PREFETCH_KEPT_MS = 5_000;

export class BoardApi {
  private memoryAnon: string | null = null;
  private minting: Promise<void> | undefined;
  private readonly prefetched = new Map<string, { at: number; answer: Promise<Page<unknown>> }>();

  constructor(readonly options: ApiOptions) {}

  private get anonName(): string {
    return `feedback-board:${this.options.project}:anon`;
  }

  /** The stored anonymous token, or null. */
  get anonToken(): string | null {
    return storage.get(this.anonName) ?? this.memoryAnon;
  }

  private setAnon(token: string | null): void {
    this.memoryAnon = token;
    storage.set(this.anonName, token);
  }

  /** Whether the voter has an identity (an SSO token or a stored anonymous token). */
  get hasIdentity(): boolean {
    return Boolean(this.options.ssoToken || this.anonToken);
  }

  /** `/projects/{project}` followed by `path`, URL-encoded. */
  projectPath(path = ""): string {
    return `/projects/${encodeURIComponent(this.options.project)}${path}`;
  }

  private headers(write: boolean): Record<string, string> {
    const headers: Record<string, string> = { "X-API-Key": this.options.key };
    if (this.options.ssoToken) headers["X-VF-Token"] = this.options.ssoToken;
    else {
      const anon = this.anonToken;
      if (anon) headers["X-VF-Anon"] = anon;
    }
    if (write) headers["Content-Type"] = "application/json";
    return headers;
  }

  private url(path: string, query: Query = {}): string {
    const params = new URLSearchParams();
    for (const [name, value] of Object.entries(query)) {
      if (value === undefined || value === null || value === "") continue;
      for (const item of Array.isArray(value) ? value : [value]) params.append(name, String(item));
    }
    const search = params.toString();
    return `${this.options.base}${path}${search ? `?${search}` : ""}`;
  }

  private async send<T>(method: string, url: string, init: RequestInit): Promise<{ body: Page<T>; response: Response }> {
    let response: Response;
    try {
      response = await fetch(url, { method, credentials: "omit", ...init });
    } catch (error) {
      throw new BoardError("network_error", (error as Error).message || "network error", 0);
    }
    let body: { data: T; meta: Meta | null; error: { code: string; message: string; field: string | null } | null } | null = null;
    try {
      body = await response.json();
    } catch {
      body = null;
    }
    if (!response.ok || !body || body.error) {
      const error = body?.error;
      const failure = new BoardError(error?.code ?? "internal", error?.message ?? `HTTP ${response.status}`, response.status, error?.field);
      (failure as BoardError & { retryAfter?: number }).retryAfter = Number(response.headers.get("Retry-After")) || 0;
      throw failure;
    }
    return { body: { data: body.data, meta: body.meta }, response };
  }

  /**
   * Starts GET `path` with `query` now; the first read() of the same address within 5 s takes
   * its answer (or its error) instead of asking again. Lets the element ask for the board
   * document and the first features page at once, rather than one after the other.
   */
  prefetch(path: string, query: Query = {}): void {
    const url = this.url(path, query);
    if (this.prefetched.has(url)) return;
    const answer = this.read<unknown>(path, query);
    // Handled by the read that takes it; one never taken must not count as unhandled.
    answer.catch(() => {});
    this.prefetched.set(url, { at: Date.now(), answer });
  }

  /** GET `path` with `query`: the envelope's data and meta. 429 waits Retry-After and tries again. */
  async read<T>(path: string, query: Query = {}): Promise<Page<T>> {
    const url = this.url(path, query);
    const early = this.prefetched.get(url);
    if (early) {
      this.prefetched.delete(url);
      if (Date.now() - early.at <= PREFETCH_KEPT_MS) return early.answer as Promise<Page<T>>;
    }
    for (let attempt = 0; ; attempt++) {
      try {
        return (await this.send<T>("GET", url, { headers: this.headers(false) })).body;
      } catch (error) {
        const retryAfter = (error as { retryAfter?: number }).retryAfter ?? 0;
        if (!(error instanceof BoardError) || error.status !== 429 || attempt >= READ_RETRIES) throw error;
        await sleep(Math.min(Math.max(retryAfter, 1), MAX_WAIT_SECONDS) * 1000);
      }
    }
  }

  /** Mints an identity when the voter has none (POST /identity), keeping its anon_token. */
  async ensureIdentity(): Promise<void> {
    if (this.hasIdentity) return;
    this.minting ??= this.send<Identity>("POST", this.url(this.projectPath("/identity")), {
      headers: { ...this.headers(true), "Idempotency-Key": idempotencyKey() },
      body: "{}",
    })
      .then(({ body }) => {
        if (body.data.anon_token) this.setAnon(body.data.anon_token);
      })
      .finally(() => {
        this.minting = undefined;
      });
    await this.minting;
  }

  /**
   * A write (POST or DELETE) of `body` to `path`, with an identity (minted first when missing)
   * and one Idempotency-Key for every try.
   */
  async write<T>(method: "POST" | "DELETE", path: string, body?: unknown): Promise<T> {
    await this.ensureIdentity();
    const key = idempotencyKey();
    const attempt = () =>
      this.send<T>(method, this.url(path), {
        headers: { ...this.headers(true), "Idempotency-Key": key },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
    try {
      return (await attempt()).body.data;
    } catch (error) {
      // A stored token the service no longer knows (erased voter, another database): start over.
      if (error instanceof BoardError && error.code === "identity_invalid" && !this.options.ssoToken && this.anonToken) {
        this.setAnon(null);
        await this.ensureIdentity();
        return (await attempt()).body.data;
      }
      throw error;
    }
  }
}
