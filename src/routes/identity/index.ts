/** Router of the identity area: .openapi(route, handler) for each route in identity.routes.ts. */
import { createRouter } from "../../lib/http/router.ts";
import * as handlers from "./identity.handlers.ts";
import * as routes from "./identity.routes.ts";

export function createIdentityRouter() {
  const router = createRouter();
  router.use("/projects/:slug/identity", handlers.emptyBodyAsObject);
  router.openapi(routes.resolveIdentity, handlers.resolveIdentity);
  return router;
}
