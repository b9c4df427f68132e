/** What the Atom feed routes take and answer (engagement-api-v3.md, "Feeds"). */
import { z } from "@hono/zod-openapi";

/** The media type of both feeds (RFC 4287 section 7, with the charset the documents are written in). */
export const ATOM_CONTENT_TYPE = "application/atom+xml; charset=utf-8";

/** Entries per feed: the 50 most recent (engagement-api-v3.md, "Feeds"). */
export const FEED_ENTRIES = 50;

/** Query of the feed routes: the embed key, for feed readers that cannot send X-API-Key. */
export const FeedQuery = z.object({
  key: z
    .string()
    .optional()
    .openapi({
      param: { name: "key", in: "query" },
      description:
        "The project's embed key, for feed readers that cannot send headers. A secret key here answers 401 invalid_key; " +
        "with X-API-Key also sent, the header authorizes. Ignored on every other route.",
      example: "fb_ek_demo_lumen_embed_key_0001",
    }),
});
export type FeedQuery = z.infer<typeof FeedQuery>;

/** An Atom 1.0 document (RFC 4287), UTF-8. */
export const AtomDocument = z.string().openapi("AtomDocument", {
  description: "An Atom 1.0 feed document (RFC 4287)",
  example:
    '<?xml version="1.0" encoding="utf-8"?>\n<feed xmlns="http://www.w3.org/2005/Atom">\n    <id>urn:feedback-board:lumen:changelog</id>\n' +
    "    <title>Lumen changelog</title>\n    <updated>2026-11-01T09:00:00.000Z</updated>\n    ...\n</feed>",
});
export type AtomDocument = z.infer<typeof AtomDocument>;
