/** Router of the imports area (owner routes) and its surface: the ImportObject, the runner, the body limit it declares. */
import { createRouter } from "../../lib/http/router.ts";
import * as ownerHandlers from "./imports.owner.handlers.ts";
import * as ownerRoutes from "./imports.owner.routes.ts";

export function createImportsRouter() {
  const router = createRouter();
  router.openapi(ownerRoutes.adminCreateImport, ownerHandlers.adminCreateImport);
  router.openapi(ownerRoutes.adminListImports, ownerHandlers.adminListImports);
  router.openapi(ownerRoutes.adminGetImport, ownerHandlers.adminGetImport);
  return router;
}

// What other areas, the server and the command line use.
export { IMPORT_SOURCES } from "./import-data.ts";
export { type ImportJobDeps, ImportWorker, runClaimedImport, runImportJob, startImportWorker } from "./imports.job.ts";
export { toImport } from "./imports.mapper.ts";
export { parseStatusMap } from "./imports.owner.handlers.ts";
export { IMPORT_BODY_LIMIT } from "./imports.owner.routes.ts";
export { ImportObject } from "./imports.owner.schemas.ts";
export { claimImport, generateLeaseToken, insertImport, MAX_IMPORT_ATTEMPTS } from "./imports.repository.ts";
