/** Router of the comments area: .openapi(route, handler) for each route in comments.routes.ts. */
import { createRouter } from "../../lib/http/router.ts";
import * as handlers from "./comments.handlers.ts";
import * as ownerHandlers from "./comments.owner.handlers.ts";
import * as ownerRoutes from "./comments.owner.routes.ts";
import * as routes from "./comments.routes.ts";

export function createCommentsRouter() {
  const router = createRouter();
  router.openapi(routes.listComments, handlers.listComments);
  router.openapi(routes.createComment, handlers.createComment);
  router.openapi(routes.deleteComment, handlers.deleteComment);
  router.openapi(routes.toggleLike, handlers.toggleLike);
  router.openapi(ownerRoutes.adminListComments, ownerHandlers.adminListComments);
  router.openapi(ownerRoutes.adminCreateComment, ownerHandlers.adminCreateComment);
  router.openapi(ownerRoutes.adminDeleteComment, ownerHandlers.adminDeleteComment);
  return router;
}

// Route definitions the MCP tools wrap (their request schemas are the tools' arguments).
export { adminCreateComment, adminListComments } from "./comments.owner.routes.ts";
// What other areas may use: the comment as events carry it.
export { CommentEventObject } from "./comments.schemas.ts";
