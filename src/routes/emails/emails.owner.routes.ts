/** The owner's email log (engagement-api-v3.md, "Email notifications": GET /admin/emails). */
import { createRoute, z } from "@hono/zod-openapi";
import { jsonContent, listEnvelopeOf, notModified } from "../../contract/envelope.ts";
import { OWNER_PATH, OwnerSlugParams, ownerReadErrors, ownerRoute } from "../../contract/owner-routes.ts";
import { PageQuery } from "../../contract/params.ts";
import { EMAIL_STATUSES, EmailObject } from "./emails.owner.schemas.ts";

export const adminListEmails = createRoute(
  ownerRoute({
    method: "get",
    path: `${OWNER_PATH}/emails`,
    operationId: "adminListEmails",
    summary: "List emails",
    description:
      "The project's email log, newest first: every email made from the notifications (pending until sent or " +
      "failed, retries included). Erasing a voter removes their emails.",
    request: {
      params: OwnerSlugParams,
      query: z.object({
        status: z
          .enum(EMAIL_STATUSES)
          .optional()
          .openapi({ param: { name: "status", in: "query" }, description: "Only emails of this status", example: "failed" }),
        ...PageQuery,
      }),
    },
    responses: {
      200: jsonContent(listEnvelopeOf(EmailObject), "A page of emails"),
      ...notModified,
      ...ownerReadErrors,
    },
  }),
);
