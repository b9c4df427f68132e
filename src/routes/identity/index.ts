/** Router of the identity area: .openapi(route, handler) for each route in identity.routes.ts. */
import { createRouter } from "../../lib/openapi.ts";

export function createIdentityRouter() {
  const router = createRouter();
  return router;
}
