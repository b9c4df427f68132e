/**
 * What the bench's requests address in a generated project, read from the database: the tag to
 * filter on, features worth opening (the most voted public ones), features with comments, and
 * (voter token, feature) pairs for the vote + withdraw cycle where the voter has no vote yet.
 */
import type { Sql } from "postgres";
import { hashSecret } from "../../src/lib/rules/secrets.ts";
import { anonToken, FILTER_TAG_INDEX, type ProjectSpec, TAG_NAMES } from "./dataset.ts";

export interface Fixtures {
  projectId: number;
  slug: string;
  tagId: number;
  /** Public features, most voted first. */
  hotFeatureIds: number[];
  /** Public features with the most comments. */
  commentedFeatureIds: number[];
  /** Anonymous tokens of voters who have votes (for reads with identity). */
  voterTokens: string[];
  /** Vote targets: the voter (by token) has no vote on the feature, which takes votes. */
  votePairs: { token: string; featureId: number }[];
}

// The generated projects keep the default settings: show_denied true, show_archived false.
const PUBLIC = "(f.is_approved OR f.status <> 'open') AND f.status <> 'archived'";

/** Reads the fixtures of a generated project; throws if it is missing. */
export async function loadFixtures(sql: Sql, spec: ProjectSpec): Promise<Fixtures> {
  const [project] = await sql<{ id: number }[]>`SELECT id FROM projects WHERE slug = ${spec.slug}`;
  if (!project) throw new Error(`project ${spec.slug} is missing`);
  const projectId = project.id;
  const [tag] = await sql<{ id: number }[]>`SELECT id FROM tags WHERE project_id = ${projectId} AND name = ${TAG_NAMES[FILTER_TAG_INDEX]!}`;
  const hot = await sql.unsafe<{ id: number }[]>(
    `SELECT f.id FROM features f WHERE f.project_id = $1 AND ${PUBLIC}
    ORDER BY f.vote_count DESC, f.id LIMIT 500`,
    [projectId],
  );
  const commented = await sql.unsafe<{ id: number }[]>(
    `SELECT f.id FROM features f WHERE f.project_id = $1 AND ${PUBLIC}
    ORDER BY f.comment_count DESC, f.id LIMIT 200`,
    [projectId],
  );
  const votable = await sql.unsafe<{ id: number }[]>(
    `SELECT f.id FROM features f JOIN columns c ON c.id = f.column_id
    WHERE f.project_id = $1 AND c.is_votable AND ${PUBLIC} ORDER BY f.vote_count DESC, f.id LIMIT 1000`,
    [projectId],
  );

  const poolSize = Math.min(4096, spec.voters);
  const tokens = Array.from({ length: poolSize }, (_, i) => anonToken(spec.slug, i));
  const voters = await sql<{ id: number; anon_token_hash: string; vote_count: number }[]>`
    SELECT id, anon_token_hash, vote_count FROM voters
    WHERE project_id = ${projectId} AND anon_token_hash = ANY(${tokens.map(hashSecret)})`;
  const voterByHash = new Map(voters.map((v) => [v.anon_token_hash, v]));
  const existing = await sql<{ voter_id: number; feature_id: number }[]>`
    SELECT voter_id, feature_id FROM votes WHERE voter_id = ANY(${voters.map((v) => v.id)})`;
  const taken = new Set(existing.map((row) => `${row.voter_id}:${row.feature_id}`));

  const votePairs: Fixtures["votePairs"] = [];
  tokens.forEach((token, k) => {
    const voter = voterByHash.get(hashSecret(token));
    if (!voter) return;
    // Walk the votable list from a per-voter offset until a feature the voter has not voted on.
    for (let step = 0; step < votable.length; step++) {
      const featureId = votable[(k + step * 7) % votable.length]!.id;
      if (!taken.has(`${voter.id}:${featureId}`)) {
        votePairs.push({ token, featureId });
        break;
      }
    }
  });
  return {
    projectId,
    slug: spec.slug,
    tagId: tag!.id,
    hotFeatureIds: hot.map((r) => r.id),
    commentedFeatureIds: commented.map((r) => r.id),
    voterTokens: tokens.filter((token) => (voterByHash.get(hashSecret(token))?.vote_count ?? 0) > 0),
    votePairs,
  };
}
