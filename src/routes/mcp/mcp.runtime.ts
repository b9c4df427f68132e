/**
 * Tool calls run their wrapped routes in process (engagement-api-v3.md, "MCP endpoint": "through
 * the same code, transactions, events and notifications as the route it wraps"): a Request to
 * the app itself, with the caller's key and a request id derived from the MCP request's, through
 * the whole keyed chain (key, owner change, content revision, the handler's validation). Only the
 * rate step is skipped (binding `rateCounted`): the MCP request counted the call once already.
 */
import type { z } from "@hono/zod-openapi";
import type { Db } from "../../../db/connect.ts";
import type { Meta } from "../../contract/envelope.ts";
import type { ProjectContext } from "../../lib/http/context.ts";
import { ApiError } from "../../lib/http/errors.ts";
import type { RateCountedBindings } from "../../middleware/rate-limit.ts";
import type { ToolError, ToolOutcome, ToolRuntime, WrappedRoute } from "./mcp.tool-kit.ts";

/** The app's fetch (app.fetch), given the bindings of an already counted request. */
export type AppDispatch = (request: Request, bindings: RateCountedBindings) => Response | Promise<Response>;

export interface CallerContext {
  dispatch: AppDispatch;
  /** The API prefix the routes are mounted under (/api/v3). */
  prefix: string;
  /** Origin of the MCP request (scheme, host, port): the in-process requests' URLs use it. */
  origin: string;
  db: Db;
  /** The caller's project (the key's). */
  project: ProjectContext;
  /** The key the MCP request presented (the project's secret key). */
  key: string;
  /** X-Request-Id of the MCP request; its n-th route call is logged as `<id>-<n>` (a new id past 255 characters). */
  requestId: string;
  now: () => Date;
}

/** Query string of `query`: arrays repeat the parameter (`status=open&status=planned`), undefined is left out. */
export function queryString(query: Record<string, unknown>): URLSearchParams {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) {
    if (value === undefined || value === null) continue;
    for (const item of Array.isArray(value) ? value : [value]) search.append(name, String(item));
  }
  return search;
}

const INTERNAL_ERROR: ToolError = { code: "internal", field: null, message: "internal error; safe to retry" };

/** The runtime of one MCP request: each call is a request to the app, numbered after the MCP request's id. */
export function createToolRuntime(caller: CallerContext): ToolRuntime {
  let calls = 0;
  return {
    now: caller.now,
    async read(read) {
      try {
        return { ok: true, status: 200, data: await read({ db: caller.db, project: caller.project, now: caller.now() }), meta: null };
      } catch (error) {
        if (!(error instanceof ApiError)) throw error;
        return { ok: false, status: error.status, error: { code: error.code, field: error.field, message: error.message } };
      }
    },
    async call(route: WrappedRoute, input = {}) {
      const path = route.path.replace(/\{(\w+)\}/g, (_, name: string) =>
        name === "slug" ? encodeURIComponent(caller.project.slug) : encodeURIComponent(String(input.params?.[name])),
      );
      const url = new URL(`${caller.prefix}${path}`, caller.origin);
      if (input.query) url.search = queryString(input.query).toString();
      calls += 1;
      const headers = new Headers({ "X-API-Key": caller.key, Accept: "application/json", "X-Request-Id": `${caller.requestId}-${calls}` });
      if (input.body !== undefined) headers.set("Content-Type", "application/json");
      const response = await caller.dispatch(
        new Request(url, {
          method: route.method.toUpperCase(),
          headers,
          body: input.body === undefined ? undefined : JSON.stringify(input.body),
        }),
        { rateCounted: true },
      );
      const envelope = (await response.json().catch(() => null)) as {
        data?: unknown;
        meta?: z.infer<typeof Meta> | null;
        error?: ToolError | null;
      } | null;
      if (response.status >= 200 && response.status < 300 && envelope !== null) {
        return { ok: true, status: response.status, data: envelope.data ?? null, meta: envelope.meta ?? null };
      }
      return { ok: false, status: response.status, error: envelope?.error ?? INTERNAL_ERROR } satisfies ToolOutcome;
    },
  };
}
