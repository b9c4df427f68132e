/** Router of the board area: .openapi(route, handler) for each route in board.routes.ts and board.owner.routes.ts. */
import { createRouter } from "../../lib/http/router.ts";
import * as handlers from "./board.handlers.ts";
import * as ownerHandlers from "./board.owner.handlers.ts";
import * as ownerRoutes from "./board.owner.routes.ts";
import * as routes from "./board.routes.ts";

export function createBoardRouter() {
  const router = createRouter();
  router.openapi(routes.getKeyBoard, handlers.getKeyBoard);
  router.openapi(routes.getProjectBoard, handlers.getProjectBoard);
  router.openapi(ownerRoutes.adminCreateBoard, ownerHandlers.adminCreateBoard);
  router.openapi(ownerRoutes.adminUpdateBoard, ownerHandlers.adminUpdateBoard);
  router.openapi(ownerRoutes.adminDeleteBoard, ownerHandlers.adminDeleteBoard);
  router.openapi(ownerRoutes.adminCreateColumn, ownerHandlers.adminCreateColumn);
  router.openapi(ownerRoutes.adminUpdateColumn, ownerHandlers.adminUpdateColumn);
  router.openapi(ownerRoutes.adminDeleteColumn, ownerHandlers.adminDeleteColumn);
  return router;
}
// The inserts an import reuses for its boards and columns (src/routes/imports/writer/).
export { insertColumn, insertCustomBoard } from "./board.owner.repository.ts";
