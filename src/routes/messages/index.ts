/** Router of the messages area: .openapi(route, handler) for each route in messages.routes.ts. */
import { createRouter } from "../../lib/openapi.ts";

export function createMessagesRouter() {
  const router = createRouter();
  return router;
}
