/** Handler of the owner's email log: parse -> repository -> toEmail -> page envelope. */
import { page } from "../../lib/http/envelope.ts";
import { pageMeta } from "../../lib/http/pagination.ts";
import type { AppRouteHandler } from "../../lib/http/router.ts";
import { toEmail } from "./emails.owner.mapper.ts";
import { listEmails } from "./emails.owner.repository.ts";
import type * as routes from "./emails.owner.routes.ts";

export const adminListEmails: AppRouteHandler<typeof routes.adminListEmails> = async (c) => {
  const { status, page: pageNumber, per_page } = c.req.valid("query");
  const request = { page: pageNumber, per_page };
  const { rows, total } = await listEmails(c.get("deps").db, c.get("project").id, status, request);
  return c.json(page(rows.map(toEmail), pageMeta(request, total)), 200);
};
