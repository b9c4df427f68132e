/** Router of the emails area: the open unsubscribe routes and the owner's email log. */
import { createRouter } from "../../lib/http/router.ts";
import * as handlers from "./emails.handlers.ts";
import * as ownerHandlers from "./emails.owner.handlers.ts";
import * as ownerRoutes from "./emails.owner.routes.ts";
import * as routes from "./emails.routes.ts";

export function createEmailsRouter() {
  const router = createRouter();
  router.openapi(routes.getUnsubscribe, handlers.getUnsubscribe);
  router.openapi(routes.postUnsubscribe, handlers.postUnsubscribe);
  router.openapi(ownerRoutes.adminListEmails, ownerHandlers.adminListEmails);
  return router;
}
