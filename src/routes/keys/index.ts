/** Router of the keys area (owner routes): .openapi(route, handler) for each route. */
import { createRouter } from "../../lib/http/router.ts";
import * as ownerHandlers from "./keys.owner.handlers.ts";
import * as ownerRoutes from "./keys.owner.routes.ts";

export function createKeysRouter() {
  const router = createRouter();
  router.openapi(ownerRoutes.adminListKeys, ownerHandlers.adminListKeys);
  router.openapi(ownerRoutes.adminRegenerateKey, ownerHandlers.adminRegenerateKey);
  return router;
}

// What other areas may use: making, regenerating and replacing keys (the admin tool and the demo).
export { createKey, type KeyKind, regenerateKey, replaceKeys } from "./keys.owner.repository.ts";
