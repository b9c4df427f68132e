/** Handlers of the Atom feed routes: project and rows -> Atom document (engagement-api-v3.md, "Feeds"). */
import type { AppDeps, ProjectContext } from "../../lib/http/context.ts";
import type { AppRouteHandler } from "../../lib/http/router.ts";
import { type FeedSubject, toChangelogFeed, toRoadmapFeed } from "./feeds.mapper.ts";
import { findFeedProject, listFeedReleases, listFeedStatusChanges } from "./feeds.repository.ts";
import type * as routes from "./feeds.routes.ts";
import { ATOM_CONTENT_TYPE, FEED_ENTRIES } from "./feeds.schemas.ts";

/**
 * The service's public address without a trailing slash (engagement-api-v3.md, "Common rules"):
 * PUBLIC_BASE_URL when the configuration has it, else its default `http://{HOST}:{PORT}`. Never
 * the request's Host header: a feed is cached for every reader (the shared read cache), and a
 * forged Host would otherwise put its links into everyone's copy.
 */
export function publicBaseUrl(config: AppDeps["config"]): string {
  const configured = (config as AppDeps["config"] & { PUBLIC_BASE_URL?: string | undefined }).PUBLIC_BASE_URL;
  if (configured) return configured.replace(/\/+$/, "");
  const host = config.HOST.includes(":") ? `[${config.HOST}]` : config.HOST;
  return `http://${host}:${config.PORT}`;
}

async function subjectOf(deps: AppDeps, project: ProjectContext): Promise<FeedSubject> {
  return {
    slug: project.slug,
    name: project.name,
    baseUrl: publicBaseUrl(deps.config),
    project: await findFeedProject(deps.db, project.id),
  };
}

export const getChangelogFeed: AppRouteHandler<typeof routes.getChangelogFeed> = async (c) => {
  const deps = c.get("deps");
  const project = c.get("project");
  const subject = await subjectOf(deps, project);
  const releases = await listFeedReleases(deps.db, project.id, deps.now(), FEED_ENTRIES);
  return c.body(toChangelogFeed(subject, releases), 200, { "Content-Type": ATOM_CONTENT_TYPE });
};

export const getRoadmapFeed: AppRouteHandler<typeof routes.getRoadmapFeed> = async (c) => {
  const deps = c.get("deps");
  const project = c.get("project");
  const subject = await subjectOf(deps, project);
  const changes = await listFeedStatusChanges(deps.db, project.id, FEED_ENTRIES);
  return c.body(toRoadmapFeed(subject, changes), 200, { "Content-Type": ATOM_CONTENT_TYPE });
};
