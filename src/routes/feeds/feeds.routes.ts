/**
 * The Atom feed routes (engagement-api-v3.md, "Feeds"): GET /projects/{slug}/changelog.atom and
 * /roadmap.atom. Public reads (project key, PRO plan, public project, read budget, ETag/304,
 * shared read cache: the same document for every reader) that also take the embed key as the
 * `key` query parameter (src/middleware/api-key.ts, access "feed"); errors are the JSON envelope.
 */
import { createRoute, z } from "@hono/zod-openapi";
import { notModified } from "../../contract/envelope.ts";
import { readErrors } from "../../contract/errors.ts";
import { SlugParam } from "../../contract/params.ts";
import { describedRoute } from "../../contract/route-description.ts";
import { sharedReadCache } from "../../middleware/shared-read-cache.ts";
import { AtomDocument, FeedQuery } from "./feeds.schemas.ts";

/** The security scheme of the `key` query parameter (registered by the feeds router). */
export const EMBED_KEY_QUERY_SCHEME = {
  type: "apiKey",
  in: "query",
  name: "key",
  description: "The project's embed key as a query parameter: only on the Atom feeds (a secret key there answers 401 invalid_key)",
} as const;

const security: Record<string, string[]>[] = [{ ApiKey: [] }, { EmbedKeyQuery: [] }];

function atomContent(description: string) {
  return { content: { "application/atom+xml": { schema: AtomDocument } }, description };
}

export const getChangelogFeed = createRoute({
  ...describedRoute(
    { kind: "read" },
    {
      method: "get",
      path: "/projects/{slug}/changelog.atom",
      operationId: "getChangelogFeed",
      summary: "Changelog as an Atom feed",
      description:
        "The 50 most recently published releases, newest first (drafts and scheduled releases never): entry id " +
        "urn:feedback-board:{slug}:release:{id}, title the release name, updated its published_at, content (html) its " +
        "sanitized body_html. The feed's updated is the newest entry's, or the project's created_at when empty. Takes " +
        "X-API-Key or the embed key as ?key=.",
      tags: ["Feeds"],
      middleware: [sharedReadCache({ sameForEveryReader: true })] as const,
      request: { params: z.object({ slug: SlugParam }), query: FeedQuery },
      responses: {
        200: atomContent("The changelog feed (Atom 1.0)"),
        ...notModified,
        ...readErrors,
      },
    },
  ),
  security,
});

export const getRoadmapFeed = createRoute({
  ...describedRoute(
    { kind: "read" },
    {
      method: "get",
      path: "/projects/{slug}/roadmap.atom",
      operationId: "getRoadmapFeed",
      summary: "Roadmap status changes as an Atom feed",
      description:
        "The 50 most recent status changes (feature.status_changed events) of features the public board listed " +
        "before or after the change, newest first: entry id urn:feedback-board:{slug}:event:{evt_ id}, title " +
        "\"{heading}: {new status}\", updated the event's time. The feed's updated is the newest entry's, or the " +
        "project's created_at when empty. Takes X-API-Key or the embed key as ?key=.",
      tags: ["Feeds"],
      middleware: [sharedReadCache({ sameForEveryReader: true })] as const,
      request: { params: z.object({ slug: SlugParam }), query: FeedQuery },
      responses: {
        200: atomContent("The roadmap feed (Atom 1.0)"),
        ...notModified,
        ...readErrors,
      },
    },
  ),
  security,
});
