/** Router of the comments area: .openapi(route, handler) for each route in comments.routes.ts. */
import { createRouter } from "../../lib/openapi.ts";

export function createCommentsRouter() {
  const router = createRouter();
  return router;
}
