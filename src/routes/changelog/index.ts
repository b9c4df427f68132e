/** Router of the changelog area: .openapi(route, handler) for each route in changelog.routes.ts. */
import { createRouter } from "../../lib/openapi.ts";

export function createChangelogRouter() {
  const router = createRouter();
  return router;
}
