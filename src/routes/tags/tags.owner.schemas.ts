/** TagObject and the bodies of the owner tag routes (owner-api-v3.md, Objects: TagObject). */
import { z } from "@hono/zod-openapi";
import { patchBodyOf } from "../../contract/owner-routes.ts";

export const TagObject = z
  .object({
    id: z.number().int().openapi({ description: "Tag id; the value of the public tag query parameter", example: 3 }),
    name: z.string().openapi({ description: "Tag name, unique in the project (case-insensitive)", example: "UI" }),
    feature_count: z.number().int().openapi({ description: "Features carrying the tag, public or not", example: 12 }),
  })
  .openapi("TagObject");

const tagFields = {
  name: z.string().trim().min(1, "must not be blank").max(100).openapi({
    description: "1..100 characters after trimming; unique in the project ignoring case (409 already_exists)",
    example: "Mobile",
  }),
};

export const TagCreateBody = z.object(tagFields).strict().openapi("TagCreate");
export const TagPatchBody = patchBodyOf(tagFields).openapi("TagPatch");

export type TagObject = z.infer<typeof TagObject>;
