/**
 * Export of a whole project as a snapshot document (docs/contract/project-snapshot.md, "Commands").
 *
 * Refs are derived from database ids (`feature-41`, the roadmap board is "roadmap"), so two
 * exports of the same data are identical. An export is a restore point (spec, "Restores"): it
 * carries every row's database id (`id`, voters' `voter_id`), keys and anonymous tokens as their
 * stored SHA-256 digests, the SSO secret as stored, the webhooks with their secrets and each
 * merged feature's merge record and the subscriptions with their opt-outs (spec, "Webhooks,
 * merges and engagement"), so `import --replace`
 * of it gives the project back with the same ids, keys, tokens and integrations, and its merges
 * can still be undone. `portableSnapshot` strips those that belong to the original for a copy
 * imported next to it.
 */
import { type Kysely, sql, type Transaction } from "kysely";
import type { Database, ImportSourceKind } from "../../db/schema.ts";
import { SNAPSHOT_FORMAT, type SnapshotDocument, type SnapshotMerge } from "./snapshot.schema.ts";

const stamp = (value: Date): string => new Date(value).toISOString();
const iso = (value: Date | null): string | null => (value === null ? null : stamp(value));

/**
 * Reads the project `slug` and returns it as a snapshot that importSnapshot accepts and that
 * re-imports to the same API-visible data. Throws an Error when no project has that slug.
 */
export async function exportSnapshot(db: Kysely<Database>, slug: string): Promise<SnapshotDocument> {
  // One repeatable-read transaction: every table is read as of the same instant.
  return db
    .transaction()
    .setIsolationLevel("repeatable read")
    .execute((trx) => readProject(trx, slug));
}

async function readProject(db: Transaction<Database>, slug: string): Promise<SnapshotDocument> {
  const project = await db.selectFrom("projects").selectAll().where("slug", "=", slug).executeTakeFirst();
  if (!project) throw new Error(`no project with slug "${slug}"`);
  const exportedAt = new Date();
  const pid = project.id;

  const keys = await db.selectFrom("api_keys").select(["kind", "key_hash"]).where("project_id", "=", pid).orderBy("id").execute();
  const tags = await db.selectFrom("tags").selectAll().where("project_id", "=", pid).orderBy("id").execute();
  const tiers = await db.selectFrom("tiers").selectAll().where("project_id", "=", pid).orderBy("id").execute();
  const boards = await db.selectFrom("boards").selectAll().where("project_id", "=", pid).orderBy("position").orderBy("id").execute();
  const columns = await db.selectFrom("columns").selectAll().where("project_id", "=", pid).orderBy("position").orderBy("id").execute();
  const voters = await db.selectFrom("voters").selectAll().where("project_id", "=", pid).orderBy("id").execute();
  const features = await db.selectFrom("features").selectAll().where("project_id", "=", pid).orderBy("id").execute();
  // What imports made, by kind and row (a vote by feature and voter); one source per row, the
  // first by source name when two imports name the same row.
  const importRows = await db
    .selectFrom("import_sources")
    .select(["source", "kind", "source_id", "target_id", "target_voter_id"])
    .where("project_id", "=", pid)
    .orderBy("source")
    .orderBy("source_id")
    .execute();
  const importSources = new Map<string, { source: "canny" | "fider" | "csv"; id: string }>();
  for (const row of importRows) {
    const key = `${row.kind}:${row.target_id}:${row.target_voter_id ?? ""}`;
    if (!importSources.has(key)) importSources.set(key, { source: row.source, id: row.source_id });
  }
  const importSource = (kind: ImportSourceKind, id: number, voterId?: number) =>
    importSources.get(`${kind}:${id}:${voterId ?? ""}`) ?? null;
  const featureTags = await db
    .selectFrom("feature_tags")
    .innerJoin("features", "features.id", "feature_tags.feature_id")
    .select(["feature_tags.feature_id", "feature_tags.tag_id"])
    .where("features.project_id", "=", pid)
    .orderBy("feature_tags.feature_id")
    .orderBy("feature_tags.tag_id")
    .execute();
  const votes = await db
    .selectFrom("votes")
    .select(["feature_id", "voter_id", "created_at"])
    .where("project_id", "=", pid)
    .orderBy("feature_id")
    .orderBy("voter_id")
    .execute();
  const comments = await db.selectFrom("comments").selectAll().where("project_id", "=", pid).orderBy("id").execute();
  const likes = await db
    .selectFrom("comment_likes")
    .innerJoin("comments", "comments.id", "comment_likes.comment_id")
    .select(["comment_likes.comment_id", "comment_likes.voter_id"])
    .where("comments.project_id", "=", pid)
    .orderBy("comment_likes.comment_id")
    .orderBy("comment_likes.voter_id")
    .execute();
  const releases = await db.selectFrom("releases").selectAll().where("project_id", "=", pid).orderBy("id").execute();
  const releaseFeatures = await db
    .selectFrom("release_features")
    .innerJoin("releases", "releases.id", "release_features.release_id")
    .select(["release_features.release_id", "release_features.feature_id", "release_features.changelog_type"])
    .where("releases.project_id", "=", pid)
    .orderBy("release_features.release_id")
    .orderBy("release_features.position")
    .orderBy("release_features.feature_id")
    .execute();
  const messages = await db.selectFrom("messages").selectAll().where("project_id", "=", pid).orderBy("id").execute();
  const dismissals = await db
    .selectFrom("message_dismissals")
    .innerJoin("messages", "messages.id", "message_dismissals.message_id")
    .select(["message_dismissals.message_id", "message_dismissals.voter_id"])
    .where("messages.project_id", "=", pid)
    .orderBy("message_dismissals.message_id")
    .orderBy("message_dismissals.voter_id")
    .execute();

  const webhooks = await db.selectFrom("webhooks").selectAll().where("project_id", "=", pid).orderBy("id").execute();
  const subscriptions = await db
    .selectFrom("subscriptions")
    .select(["voter_id", "feature_id", "reason", "opted_out", "created_at"])
    .where("project_id", "=", pid)
    .orderBy("feature_id")
    .orderBy("voter_id")
    .execute();
  const merges = await db
    .selectFrom("feature_merges")
    .select(["id", "source_id", "target_id", "previous_status", "previous_column_id", "previous_linked_feature_id"])
    .where("project_id", "=", pid)
    .execute();
  // A moved vote counts only while it sits on the target as it arrived (compared in SQL, to the
  // microsecond): one withdrawn or cast again since is not moved back by an unmerge, so it is not
  // listed, and the restored merge leaves it where it is too.
  const mergeVotes = await sql<{
    merge_id: number;
    voter_id: number;
    kind: "moved" | "duplicate";
    created_at: Date;
    target_created_at: Date | null;
    on_target: boolean;
  }>`SELECT mv.merge_id, mv.voter_id, mv.kind, mv.created_at, mv.target_created_at,
      (t.voter_id IS NOT NULL AND t.created_at = mv.created_at AND t.weight = mv.weight) AS on_target
    FROM feature_merge_votes mv
    JOIN feature_merges m ON m.id = mv.merge_id
    LEFT JOIN votes t ON t.feature_id = m.target_id AND t.voter_id = mv.voter_id
    WHERE m.project_id = ${pid}::int
    ORDER BY mv.merge_id, mv.voter_id`.execute(db);

  const boardRef = new Map(boards.map((b) => [b.id, b.kind === "roadmap" ? "roadmap" : `board-${b.id}`]));
  const boardKind = new Map(boards.map((b) => [b.id, b.kind]));
  const ref = (prefix: string) => (id: number) => `${prefix}-${id}`;
  const columnRef = ref("column");
  const tagRef = ref("tag");
  const tierRef = ref("tier");
  const voterRef = ref("voter");
  const featureRef = ref("feature");
  const commentRef = ref("comment");
  const releaseRef = ref("release");
  const messageRef = ref("message");

  const tagsOf = group(featureTags, (row) => row.feature_id);
  const entriesOf = group(releaseFeatures, (row) => row.release_id);
  const mergeOf = new Map(merges.map((m) => [m.source_id, m]));
  const mergeVotesOf = group(mergeVotes.rows, (row) => row.merge_id);
  const toMerge = (m: (typeof merges)[number]): SnapshotMerge => {
    const votesOfMerge = mergeVotesOf.get(m.id) ?? [];
    const kept = votesOfMerge.filter((v) => v.kind === "duplicate");
    return {
      into: featureRef(m.target_id),
      previous_status: m.previous_status as SnapshotMerge["previous_status"],
      previous_column: m.previous_column_id === null ? null : columnRef(m.previous_column_id),
      moved_voters: votesOfMerge.filter((v) => v.kind === "moved" && v.on_target).map((v) => voterRef(v.voter_id)),
      kept_voters: kept.map((v) => voterRef(v.voter_id)),
      previous_linked_feature: m.previous_linked_feature_id === null ? null : featureRef(m.previous_linked_feature_id),
      kept_vote_times: kept.map((v) => ({
        voter: voterRef(v.voter_id),
        duplicate_created_at: stamp(v.created_at),
        target_created_at: iso(v.target_created_at),
      })),
    };
  };

  return {
    format: SNAPSHOT_FORMAT,
    project: {
      slug: project.slug,
      name: project.name,
      description: project.description,
      logo_url: project.logo_url,
      banner_url: project.banner_url,
      currency_symbol: project.currency_symbol,
      show_branding: project.show_branding,
      is_private: project.is_private,
      plan: project.plan,
      sso_secret: project.sso_secret,
      stripe_webhook_secret: project.stripe_webhook_secret,
      paddle_webhook_secret: project.paddle_webhook_secret,
      allowed_origins: project.allowed_origins,
      settings: project.settings,
      theme: project.theme,
      notifications: { ...project.notification_settings, changelog_url: project.notification_settings.changelog_url ?? null },
    },
    keys: keys.map((k) => ({ kind: k.kind, key_sha256: k.key_hash })),
    tags: tags.map((t) => ({ ref: tagRef(t.id), id: t.id, name: t.name, import_source: importSource("tag", t.id) })),
    tiers: tiers.map((t) => ({
      ref: tierRef(t.id),
      id: t.id,
      name: t.name,
      mrr_cents: t.mrr_cents,
      multiplier: t.multiplier,
      stripe_price_ids: t.stripe_price_ids,
      paddle_price_ids: t.paddle_price_ids,
    })),
    boards: boards.map((b) => ({
      ref: boardRef.get(b.id)!,
      id: b.id,
      kind: b.kind,
      name: b.name,
      slug: b.slug,
      columns: columns
        .filter((c) => c.board_id === b.id)
        .map((c) => ({
          ref: columnRef(c.id),
          id: c.id,
          name: c.name,
          color: c.color,
          position: c.position,
          is_votable: c.is_votable,
          status: c.status,
        })),
      import_source: importSource("board", b.id),
    })),
    voters: voters.map((v) => ({
      ref: voterRef(v.id),
      voter_id: v.public_id,
      kind: v.kind,
      anon_token: null,
      anon_token_sha256: v.anon_token_hash,
      sso_id: v.sso_id,
      display_name: v.display_name,
      email: v.email,
      role: v.role,
      banned: v.banned,
      company: v.company,
      tier: v.tier_id === null ? null : tierRef(v.tier_id),
      mrr_override_cents: v.mrr_override_cents,
      stripe_customer_id: v.stripe_customer_id,
      paddle_customer_id: v.paddle_customer_id,
      subscription_id: v.subscription_id,
      subscription_status: v.subscription_status,
      subscribed_at: iso(v.subscribed_at),
      trial_ends_at: iso(v.trial_ends_at),
      canceled_at: iso(v.canceled_at),
      last_synced_at: iso(v.last_synced_at),
      churned: v.churned,
      churned_at: iso(v.churned_at),
      churn_source: v.churn_source,
      email_unsubscribed: v.email_unsubscribed,
      created_at: stamp(v.created_at),
      import_source: importSource("voter", v.id),
    })),
    features: features.map((f) => {
      const archived = f.status === "archived";
      const onRoadmap = boardKind.get(f.board_id) === "roadmap";
      return {
        ref: featureRef(f.id),
        id: f.id,
        board: boardRef.get(f.board_id)!,
        column: archived || f.column_id === null ? null : columnRef(f.column_id),
        // A roadmap feature's status is its column's; the format asks for null there.
        status: archived ? "archived" : onRoadmap ? null : (f.status as SnapshotDocument["features"][number]["status"]),
        heading: f.heading,
        description: f.description,
        author: f.author_voter_id === null ? null : voterRef(f.author_voter_id),
        is_approved: f.is_approved,
        is_pinned: f.is_pinned,
        position: f.position,
        progress: f.progress,
        view_count: f.view_count,
        effort: f.effort,
        developer_response: f.developer_response,
        response_is_denial: f.response_is_denial,
        linked_feature: f.linked_feature_id === null ? null : featureRef(f.linked_feature_id),
        tags: (tagsOf.get(f.id) ?? []).map((row) => tagRef(row.tag_id)),
        start_date: iso(f.start_date),
        target_date: iso(f.target_date),
        created_at: stamp(f.created_at),
        updated_at: stamp(f.updated_at),
        merge: mergeOf.has(f.id) ? toMerge(mergeOf.get(f.id)!) : null,
        import_source: importSource("feature", f.id),
      };
    }),
    votes: votes.map((v) => ({
      voter: voterRef(v.voter_id),
      feature: featureRef(v.feature_id),
      created_at: stamp(v.created_at),
      import_source: importSource("vote", v.feature_id, v.voter_id),
    })),
    comments: comments.map((c) => ({
      ref: commentRef(c.id),
      id: c.id,
      feature: featureRef(c.feature_id),
      voter: voterRef(c.voter_id),
      parent: c.parent_id === null ? null : commentRef(c.parent_id),
      content: c.content,
      created_at: stamp(c.created_at),
      import_source: importSource("comment", c.id),
    })),
    likes: likes.map((l) => ({ voter: voterRef(l.voter_id), comment: commentRef(l.comment_id) })),
    releases: releases.map((r) => ({
      ref: releaseRef(r.id),
      id: r.id,
      name: r.name,
      slug: r.slug,
      body: r.body,
      is_featured: r.is_featured,
      published_at: iso(r.published_at),
      view_count: r.view_count,
      features: (entriesOf.get(r.id) ?? []).map((e) => ({ feature: featureRef(e.feature_id), changelog_type: e.changelog_type })),
      import_source: importSource("release", r.id),
    })),
    messages: messages.map((m) => ({
      ref: messageRef(m.id),
      id: m.id,
      title: m.title,
      body: m.body,
      kind: m.kind as SnapshotDocument["messages"][number]["kind"],
      presentation: m.presentation as SnapshotDocument["messages"][number]["presentation"],
      priority: m.priority,
      action_label: m.action_label,
      action_url: m.action_url,
      is_dismissible: m.is_dismissible,
      platforms: m.platforms as SnapshotDocument["messages"][number]["platforms"],
      min_app_version: m.min_app_version,
      max_app_version: m.max_app_version,
      starts_at: iso(m.starts_at),
      ends_at: iso(m.ends_at),
      created_at: stamp(m.created_at),
    })),
    dismissals: dismissals.map((d) => ({ voter: voterRef(d.voter_id), message: messageRef(d.message_id) })),
    // The rotation overlap is carried while it lasts, so receivers that still verify with the
    // previous secret keep working after a restore; an expired one signs nothing and is left out.
    webhooks: webhooks.map((w) => {
      const overlap = w.previous_secret !== null && w.previous_secret_expires_at !== null && w.previous_secret_expires_at > exportedAt;
      return {
        id: w.id,
        url: w.url,
        events: w.events as SnapshotDocument["webhooks"][number]["events"],
        description: w.description,
        enabled: w.enabled,
        disabled_reason: w.disabled_reason,
        secret: w.secret,
        previous_secret: overlap ? w.previous_secret : null,
        previous_secret_expires_at: overlap ? iso(w.previous_secret_expires_at) : null,
        created_at: stamp(w.created_at),
      };
    }),
    // Opt-outs included: a restore must not let later votes and comments subscribe them again.
    subscriptions: subscriptions.map((s) => ({
      voter: voterRef(s.voter_id),
      feature: featureRef(s.feature_id),
      reason: s.reason,
      opted_out: s.opted_out,
      created_at: stamp(s.created_at),
    })),
  };
}

/**
 * A copy of exported `doc` that imports next to the project it came from (another slug, same
 * database): no row ids, voter_ids, key digests or token digests, which belong to the original.
 * The copy has no keys; give it its own. Its voters keep everything but their tokens.
 */
export function portableSnapshot(doc: SnapshotDocument): SnapshotDocument {
  const strip = <T extends { id?: number }>({ id: _id, ...row }: T) => row;
  return {
    ...doc,
    keys: [],
    tags: doc.tags.map(strip),
    tiers: doc.tiers.map(strip),
    boards: doc.boards.map((board) => ({ ...strip(board), columns: board.columns.map(strip) })),
    voters: doc.voters.map(({ voter_id: _voterId, ...voter }) => ({ ...voter, anon_token: null, anon_token_sha256: null })),
    features: doc.features.map(strip),
    comments: doc.comments.map(strip),
    releases: doc.releases.map(strip),
    messages: doc.messages.map(strip),
    webhooks: [],
  };
}

function group<T>(rows: T[], key: (row: T) => number): Map<number, T[]> {
  const out = new Map<number, T[]>();
  for (const row of rows) {
    const list = out.get(key(row));
    if (list) list.push(row);
    else out.set(key(row), [row]);
  }
  return out;
}
