/** Router of the identity area: .openapi(route, handler) for each route in identity.routes.ts. */
import { createRouter } from "../../lib/http/router.ts";
import { emptyBodyAsObject, resolveIdentity } from "./identity.handlers.ts";
import * as routes from "./identity.routes.ts";

export function createIdentityRouter() {
  const router = createRouter();
  router.use("/projects/:slug/identity", emptyBodyAsObject);
  router.openapi(routes.resolveIdentity, resolveIdentity);
  return router;
}
