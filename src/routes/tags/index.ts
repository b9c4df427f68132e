/** Router of the tags area (owner routes only; the public board lists tags in its document). */
import { createRouter } from "../../lib/http/router.ts";
import * as ownerHandlers from "./tags.owner.handlers.ts";
import * as ownerRoutes from "./tags.owner.routes.ts";

export function createTagsRouter() {
  const router = createRouter();
  router.openapi(ownerRoutes.adminListTags, ownerHandlers.adminListTags);
  router.openapi(ownerRoutes.adminCreateTag, ownerHandlers.adminCreateTag);
  router.openapi(ownerRoutes.adminUpdateTag, ownerHandlers.adminUpdateTag);
  router.openapi(ownerRoutes.adminDeleteTag, ownerHandlers.adminDeleteTag);
  return router;
}
// The lookup and insert an import reuses for its tags (src/routes/imports/writer/).
export { findTagByName, insertTag } from "./tags.owner.repository.ts";
