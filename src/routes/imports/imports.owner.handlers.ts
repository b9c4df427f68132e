/**
 * Handlers of the owner's import routes (imports-v3.md, "Routes"): POST reads the multipart
 * form as a stream (busboy) or Canny's JSON form, checks every field (422 naming it), stores the
 * job with its export and answers 202; the runner (imports.job.ts) does the rest.
 */
import { Readable } from "node:stream";
import busboy from "busboy";
import { FEATURE_STATUSES } from "../../contract/enums.ts";
import { page, success } from "../../lib/http/envelope.ts";
import { ApiError, validationError } from "../../lib/http/errors.ts";
import { pageMeta } from "../../lib/http/pagination.ts";
import type { AppRouteHandler } from "../../lib/http/router.ts";
import { IMPORT_SOURCES, type ImportSourceName } from "./import-data.ts";
import { fetchCannyInBackground } from "./imports.canny.ts";
import { toImport } from "./imports.mapper.ts";
import type * as routes from "./imports.owner.routes.ts";
import { IMPORT_UPLOAD_MAX_BYTES } from "./imports.owner.routes.ts";
import { ImportCreateBody } from "./imports.owner.schemas.ts";
import { findImport, generateLeaseToken, insertImport, listImports } from "./imports.repository.ts";

type StatusTarget = (typeof FEATURE_STATUSES)[number];
interface ImportRequest {
  source: ImportSourceName;
  dryRun: boolean;
  boards: "roadmap" | "custom";
  statusMap: Record<string, StatusTarget>;
}

const statuses: ReadonlySet<string> = new Set(FEATURE_STATUSES);

/** `status_map` as sent in a form field (JSON text): 422 naming `status_map` or `status_map.<key>`. */
export function parseStatusMap(value: unknown): Record<string, StatusTarget> {
  if (value === undefined || value === null || value === "") return {};
  let map: unknown = value;
  if (typeof value === "string") {
    try {
      map = JSON.parse(value);
    } catch {
      throw validationError("status_map", "status_map: must be a JSON object of source status -> status");
    }
  }
  if (typeof map !== "object" || map === null || Array.isArray(map)) {
    throw validationError("status_map", "status_map: must be a JSON object of source status -> status");
  }
  const entries = Object.entries(map);
  if (entries.length > 200) throw validationError("status_map", "status_map: at most 200 statuses");
  for (const [key, target] of entries) {
    if (typeof target !== "string" || !statuses.has(target)) {
      throw validationError(`status_map.${key}`, `status_map.${key}: must be one of ${FEATURE_STATUSES.join(", ")}`);
    }
  }
  return map as Record<string, StatusTarget>;
}

function parseFormFields(fields: Map<string, string>): ImportRequest {
  const source = fields.get("source");
  if (source === undefined || !(IMPORT_SOURCES as readonly string[]).includes(source)) {
    throw validationError("source", `source: must be one of ${IMPORT_SOURCES.join(", ")}`);
  }
  const dryRun = fields.get("dry_run") ?? "false";
  if (dryRun !== "true" && dryRun !== "false") throw validationError("dry_run", "dry_run: must be true or false");
  const boards = fields.get("boards") ?? "roadmap";
  if (boards !== "roadmap" && boards !== "custom") throw validationError("boards", "boards: must be roadmap or custom");
  return { source: source as ImportSourceName, dryRun: dryRun === "true", boards, statusMap: parseStatusMap(fields.get("status_map")) };
}

/**
 * Reads a multipart body as it arrives: the text fields and the one `file` part (at most
 * IMPORT_UPLOAD_MAX_BYTES; the body limit has already refused a longer body). A body the
 * idempotency step has read (to fingerprint it) is read from there.
 */
async function readMultipart(c: Parameters<AppRouteHandler<typeof routes.adminCreateImport>>[0]) {
  const contentType = c.req.header("Content-Type") ?? "";
  const raw = c.req.raw;
  const input = raw.bodyUsed
    ? Readable.from([Buffer.from(await c.req.arrayBuffer())])
    : raw.body
      ? Readable.fromWeb(raw.body as import("node:stream/web").ReadableStream<Uint8Array>)
      : Readable.from([]);
  const fields = new Map<string, string>();
  const chunks: Buffer[] = [];
  let fileName: string | null = null;
  let files = 0;
  let tooBig = false;
  let parser: busboy.Busboy;
  try {
    parser = busboy({
      headers: { "content-type": contentType },
      limits: { files: 1, fields: 20, fieldSize: 1024 * 1024, fileSize: IMPORT_UPLOAD_MAX_BYTES },
    });
  } catch (error) {
    throw validationError("body", `body: not a multipart form (${(error as Error).message})`);
  }
  await new Promise<void>((resolve, reject) => {
    parser.on("field", (name, value) => fields.set(name, value));
    parser.on("file", (name, stream, info) => {
      if (name !== "file") {
        stream.resume();
        return;
      }
      files += 1;
      fileName = info.filename ?? null;
      stream.on("data", (chunk: Buffer) => chunks.push(chunk));
      stream.on("limit", () => {
        tooBig = true;
      });
    });
    parser.on("close", () => resolve());
    parser.on("error", (error) => reject(validationError("body", `body: not a readable multipart form (${(error as Error).message})`)));
    input.on("error", reject);
    input.pipe(parser);
  });
  if (tooBig) throw new ApiError("too_large", "file: the export is over 50 MB");
  const request = parseFormFields(fields);
  if (files === 0) throw validationError("file", "file: the export is required (a file part named file)");
  const bytes = Buffer.concat(chunks);
  if (bytes.length === 0) throw validationError("file", "file: the export is empty");
  return { request, file: { name: fileName as string | null, bytes: new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.length) } };
}

export const adminCreateImport: AppRouteHandler<typeof routes.adminCreateImport> = async (c) => {
  const deps = c.get("deps");
  const projectId = c.get("project").id;
  const contentType = c.req.header("Content-Type") ?? "";
  if (/^multipart\/form-data/i.test(contentType)) {
    const { request, file } = await readMultipart(c);
    const row = await insertImport(deps.db, {
      projectId,
      source: request.source,
      dryRun: request.dryRun,
      options: { boards: request.boards, status_map: request.statusMap },
      file,
    });
    // Nothing of the board changes until the job commits (which retires cached answers itself).
    c.set("contentUnchanged", true);
    c.set("lookupsUnchanged", true);
    return c.json(success(toImport(row)), 202);
  }
  const parsed = ImportCreateBody.safeParse(await c.req.json().catch(() => undefined));
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const path = issue?.code === "unrecognized_keys" ? [...issue.path, issue.keys[0]] : (issue?.path ?? []);
    const field = path.length > 0 ? path.map(String).join(".") : "body";
    const message =
      field === "source"
        ? "source: only canny reads an API (send other sources' exports as multipart/form-data with a file)"
        : issue?.message;
    throw validationError(field, message?.startsWith(field) ? message : `${field}: ${message ?? "invalid"}`);
  }
  const body = parsed.data;
  const token = generateLeaseToken();
  const row = await insertImport(deps.db, {
    projectId,
    source: "canny",
    dryRun: body.dry_run,
    options: { boards: body.boards, status_map: body.status_map },
    file: null,
    lease: { token, seconds: deps.config.IMPORT_LEASE_SECONDS },
  });
  // After the answer: the export is fetched with the key, stored, and the key dropped.
  fetchCannyInBackground(deps, row, token, body.api_key);
  c.set("contentUnchanged", true);
  c.set("lookupsUnchanged", true);
  return c.json(success(toImport(row)), 202);
};

export const adminListImports: AppRouteHandler<typeof routes.adminListImports> = async (c) => {
  const { page: pageNumber, per_page } = c.req.valid("query");
  const request = { page: pageNumber, per_page };
  const deps = c.get("deps");
  const { rows, total } = await listImports(deps.db, c.get("project").id, request);
  return c.json(
    page(
      rows.map((row) => toImport(row, deps.importProgress?.get(row.id))),
      pageMeta(request, total),
    ),
    200,
  );
};

export const adminGetImport: AppRouteHandler<typeof routes.adminGetImport> = async (c) => {
  const { import_id } = c.req.valid("param");
  const deps = c.get("deps");
  const row = await findImport(deps.db, c.get("project").id, import_id);
  if (!row) throw new ApiError("not_found", "no import with this id in the project");
  return c.json(success(toImport(row, deps.importProgress?.get(row.id))), 200);
};
