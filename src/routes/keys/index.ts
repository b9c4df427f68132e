/** Router of the keys area (owner routes): .openapi(route, handler) for each route. */
import { createRouter } from "../../lib/http/router.ts";
import * as handlers from "./keys.owner.handlers.ts";
import * as routes from "./keys.owner.routes.ts";

export function createKeysRouter() {
  const router = createRouter();
  router.openapi(routes.adminListKeys, handlers.listKeysHandler);
  router.openapi(routes.adminRegenerateKey, handlers.regenerateKeyHandler);
  return router;
}
