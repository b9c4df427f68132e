/** EmailObject: one email of the owner's log (engagement-api-v3.md, "Email notifications"). */
import { z } from "@hono/zod-openapi";

export const EMAIL_STATUSES = ["pending", "sent", "failed"] as const;

export const EmailObject = z
  .object({
    id: z.number().int().openapi({ description: "Email id", example: 318 }),
    voter_id: z.string().openapi({ description: "The recipient voter's id", example: "v_8f3a2c" }),
    to: z.string().openapi({ description: "The bare address it is (or was) sent to", example: "ada@example.com" }),
    subject: z.string().openapi({ description: "Subject line", example: "[Lumen] Night theme and 2 more" }),
    notification_ids: z.array(z.string()).openapi({
      description: "The notifications it holds (those read before it left are left out)",
      example: ["ntf_1042", "ntf_1043", "ntf_1050"],
    }),
    status: z.enum(EMAIL_STATUSES).openapi({
      description: "pending until sent or failed (retries included); sent; failed",
      example: "sent",
    }),
    attempts: z.number().int().openapi({ description: "SMTP attempts made", example: 1 }),
    last_error: z.string().nullable().openapi({ description: "The last failed attempt's SMTP answer or connection error", example: null }),
    sent_at: z
      .string()
      .nullable()
      .openapi({ description: "When the SMTP server accepted it, RFC 3339 UTC", example: "2026-11-25T10:15:03.000Z" }),
    created_at: z
      .string()
      .openapi({ description: "When it was made (its digest window closed), RFC 3339 UTC", example: "2026-11-25T10:15:00.000Z" }),
  })
  .openapi("EmailObject");

export type EmailObject = z.infer<typeof EmailObject>;
