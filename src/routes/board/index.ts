/** Router of the board area: .openapi(route, handler) for each route in board.routes.ts. */
import { createRouter } from "../../lib/openapi.ts";

export function createBoardRouter() {
  const router = createRouter();
  return router;
}
