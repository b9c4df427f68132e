/**
 * The imports area's objects and bodies (imports-v3.md, "Routes": ImportObject; the JSON body of
 * POST /imports and the form fields of its multipart body).
 */
import { z } from "@hono/zod-openapi";
import { FEATURE_STATUSES } from "../../contract/enums.ts";
import { ErrorObject } from "../../contract/errors.ts";
import { IMPORT_COUNT_KINDS, IMPORT_SOURCES } from "./import-data.ts";

/** The six statuses a source status may be mapped to. */
const ImportStatusTarget = z.enum(FEATURE_STATUSES);

/** `status_map`: source status name -> one of the six statuses (imports-v3.md, "Routes"). */
export const ImportStatusMap = z
  .record(z.string().min(1).max(200), ImportStatusTarget)
  .refine((map) => Object.keys(map).length <= 200, { message: "at most 200 statuses" })
  .openapi({
    description: "Source status name -> one of the six statuses; overrides the source's own table",
    example: { "under review": "planned" },
  });

export const ImportBoardsOption = z.enum(["roadmap", "custom"]).openapi({
  description:
    "roadmap: every feature goes to the roadmap and a source board becomes a tag; custom: each source board becomes a custom board",
  example: "roadmap",
});

const Counts = z
  .object({
    created: z.number().int().openapi({ example: 120 }),
    updated: z.number().int().openapi({ example: 0 }),
    skipped: z.number().int().openapi({ example: 2 }),
  })
  .openapi("ImportCount");

export const ImportObject = z
  .object({
    id: z.string().openapi({ description: "Import id: `imp_` and 22 base64url characters", example: "imp_Qm9hcmQgaW1wb3J0IGlk" }),
    source: z.enum(IMPORT_SOURCES).openapi({ description: "Where the records come from", example: "canny" }),
    dry_run: z.boolean().openapi({ description: "True: read, checked and counted; nothing written", example: false }),
    status: z
      .enum(["queued", "running", "succeeded", "failed"])
      .openapi({ description: "queued until a runner claims it; succeeded or failed when it ends", example: "succeeded" }),
    options: z
      .object({ boards: ImportBoardsOption, status_map: z.record(z.string(), ImportStatusTarget) })
      .openapi({ description: "The options in force" }),
    progress: z
      .object({
        done: z.number().int().openapi({ description: "Source records handled so far", example: 1200 }),
        total: z.number().int().nullable().openapi({ description: "Source records in all; null until known", example: 5400 }),
      })
      .openapi({ description: "How far the job is" }),
    counts: z
      .object(
        Object.fromEntries(IMPORT_COUNT_KINDS.map((kind) => [kind, Counts])) as Record<(typeof IMPORT_COUNT_KINDS)[number], typeof Counts>,
      )
      .openapi({ description: "Per kind of record: created, updated and skipped (zeros until the job ends)" }),
    warnings: z
      .array(
        z.object({
          path: z.string().openapi({ description: "The record: posts.json[3], features.csv:12", example: "features.csv:12" }),
          message: z.string().openapi({ description: "What was done with it", example: "no title: row skipped" }),
        }),
      )
      .openapi({ description: "The first 1,000 warnings" }),
    warning_count: z.number().int().openapi({ description: "All the warnings", example: 3 }),
    error: z.union([ErrorObject, z.null()]).openapi({ description: "Why the import failed (Error object); null unless failed" }),
    created_at: z.string().openapi({ description: "RFC 3339", example: "2026-12-07T12:00:00.000Z" }),
    started_at: z
      .string()
      .nullable()
      .openapi({ description: "When a runner last began it, RFC 3339", example: "2026-12-07T12:00:01.000Z" }),
    finished_at: z.string().nullable().openapi({ description: "When it ended, RFC 3339", example: "2026-12-07T12:00:09.000Z" }),
  })
  .openapi("ImportObject");

export type ImportObject = z.infer<typeof ImportObject>;

/** POST /imports as JSON: Canny's API read directly (the key is used for the job's requests and dropped). */
export const ImportCreateBody = z
  .object({
    source: z.literal("canny").openapi({ description: "Only canny reads an API; other sources upload a file (multipart)" }),
    api_key: z
      .string()
      .min(1)
      .max(500)
      .openapi({ description: "Canny secret API key (Settings -> API); never stored", example: "cnny_..." }),
    dry_run: z.boolean().default(false).openapi({ description: "Read and count only; write nothing", example: false }),
    boards: ImportBoardsOption.default("roadmap"),
    status_map: ImportStatusMap.default({}),
  })
  .strict()
  .openapi("ImportCreateBody");

export type ImportCreateBody = z.infer<typeof ImportCreateBody>;

/**
 * The multipart form of POST /imports, for the OpenAPI document only: the handler reads it as a
 * stream (busboy) and checks each field itself (imports.owner.handlers.ts).
 */
export const ImportUploadForm: { type: "object"; required: string[]; properties: Record<string, Record<string, unknown>> } = {
  type: "object",
  required: ["source", "file"],
  properties: {
    source: { type: "string", enum: [...IMPORT_SOURCES], description: "Where the export comes from" },
    file: {
      type: "string",
      format: "binary",
      description: "The export: Canny zip of list answers, Fider backup.zip or posts.csv, features.csv or a zip of CSV files",
    },
    dry_run: { type: "string", enum: ["true", "false"], default: "false", description: "true: read and count only; write nothing" },
    boards: { type: "string", enum: ["roadmap", "custom"], default: "roadmap", description: "Where features go (see ImportCreateBody)" },
    status_map: {
      type: "string",
      description:
        'A JSON object: source status name -> one of open, planned, in_progress, done, denied, archived; e.g. {"started":"in_progress"}',
    },
  },
};
