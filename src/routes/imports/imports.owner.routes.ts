/** The owner's import routes (imports-v3.md, "Routes"). */
import { createRoute, z } from "@hono/zod-openapi";
import { envelopeOf, jsonContent, listEnvelopeOf, notModified } from "../../contract/envelope.ts";
import { OWNER_PATH, OwnerSlugParams, ownerReadErrors, ownerRoute, ownerWriteErrors } from "../../contract/owner-routes.ts";
import { PageQuery } from "../../contract/params.ts";
import { ImportCreateBody, ImportObject, ImportUploadForm } from "./imports.owner.schemas.ts";

/** The body limit of POST /imports (imports-v3.md, "Routes": 50 MB; every other route keeps one megabyte). */
export const IMPORT_UPLOAD_MAX_BYTES = 50 * 1024 * 1024;

/** The exception to the one-megabyte body limit this area declares (src/middleware/request-body.ts). */
export const IMPORT_BODY_LIMIT = {
  method: "POST",
  path: /^\/api\/v3\/projects\/[^/]+\/admin\/imports$/,
  maxBytes: IMPORT_UPLOAD_MAX_BYTES,
  what: "50 MB",
} as const;

const ImportParams = OwnerSlugParams.extend({
  import_id: z
    .string()
    .min(1)
    .max(100)
    .openapi({ param: { name: "import_id", in: "path" }, description: "Import id (imp_...)", example: "imp_Qm9hcmQgaW1wb3J0IGlk" }),
});

export const adminCreateImport = createRoute(
  ownerRoute({
    method: "post",
    path: `${OWNER_PATH}/imports`,
    operationId: "adminCreateImport",
    summary: "Start an import",
    description:
      "Queues an import of a Canny, Fider or CSV export (multipart/form-data, at most 50 MB: 413 too_large above), or of " +
      "Canny's API read directly (application/json with api_key; the key is used for the job's requests and never stored). " +
      "The job runs in the background, once, all or nothing; poll GET /imports/{import_id}. A field at fault is 422 " +
      "validation_failed naming it (source, file, dry_run, boards, status_map or status_map.<key>, api_key). With " +
      "Idempotency-Key, a retry of the same request (same bytes) answers the same import.",
    request: {
      params: OwnerSlugParams,
      body: {
        content: {
          "multipart/form-data": { schema: ImportUploadForm },
          "application/json": { schema: ImportCreateBody },
        },
        // Either form; which one is told by Content-Type (the handler checks the fields).
        required: false,
      },
    },
    responses: {
      202: jsonContent(envelopeOf(ImportObject), "The import, queued"),
      ...ownerWriteErrors,
    },
  }),
);

export const adminListImports = createRoute(
  ownerRoute({
    method: "get",
    path: `${OWNER_PATH}/imports`,
    operationId: "adminListImports",
    summary: "List imports",
    description: "The project's imports, newest first.",
    request: { params: OwnerSlugParams, query: z.object({ ...PageQuery }) },
    responses: {
      200: jsonContent(listEnvelopeOf(ImportObject), "A page of imports"),
      ...notModified,
      ...ownerReadErrors,
    },
  }),
);

export const adminGetImport = createRoute(
  ownerRoute({
    method: "get",
    path: `${OWNER_PATH}/imports/{import_id}`,
    operationId: "adminGetImport",
    summary: "Get an import",
    description: "One import of the project, with its progress while it runs and its counts, warnings and error when it ends.",
    request: { params: ImportParams },
    responses: {
      200: jsonContent(envelopeOf(ImportObject), "The import"),
      ...notModified,
      ...ownerReadErrors,
    },
  }),
);
