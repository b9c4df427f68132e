/** Router of the board area: .openapi(route, handler) for each route in board.routes.ts. */
import { createRouter } from "../../lib/openapi.ts";
import * as handlers from "./board.handlers.ts";
import * as routes from "./board.routes.ts";

export function createBoardRouter() {
  const router = createRouter();
  router.openapi(routes.getKeyBoard, handlers.getKeyBoard);
  router.openapi(routes.getProjectBoard, handlers.getProjectBoard);
  return router;
}
