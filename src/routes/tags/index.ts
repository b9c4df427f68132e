/** Router of the tags area (owner routes only; the public board lists tags in its document). */
import { createRouter } from "../../lib/http/router.ts";
import * as handlers from "./tags.owner.handlers.ts";
import * as routes from "./tags.owner.routes.ts";

export function createTagsRouter() {
  const router = createRouter();
  router.openapi(routes.adminListTags, handlers.adminListTags);
  router.openapi(routes.adminCreateTag, handlers.adminCreateTag);
  router.openapi(routes.adminUpdateTag, handlers.adminUpdateTag);
  router.openapi(routes.adminDeleteTag, handlers.adminDeleteTag);
  return router;
}
