/**
 * Writing a validated snapshot (docs/contract/project-snapshot.md, "Document") inside the import's one
 * transaction: every list as multi-row inserts in chunks (link tables through unnest), refs
 * turned into the new rows' ids as they come back, merge records and webhooks, stored counters
 * computed in SQL at the end.
 */
import { sql } from "kysely";
import type { ImportSourceKind } from "../../db/schema.ts";
import { generateWebhookSecret } from "../events/signing.ts";
import { generateHandle } from "../lib/rules/handles.ts";
import { renderMarkdown } from "../lib/rules/markdown.ts";
import { generateVoterId, keyHint } from "../lib/rules/secrets.ts";
import type { IdMap, SnapshotDocument } from "./snapshot.schema.ts";
import { chunks, insertByRef, insertInChunks, insertUnnest, need, type ProgressSink, type Trx } from "./snapshot-chunks.ts";
import { computeCounters } from "./snapshot-counters.ts";
import { anonTokenDigest, keyDigest, rowsWithIds } from "./snapshot-rules.ts";

/** Ids a replace carries over from the project it deletes (snapshot-import.ts). */
export interface KeptIds {
  /** The replaced project's id, taken again by the new row. */
  projectId?: number;
  /** The replaced project's voters: voter_id (public) -> internal row id, reused for the same voter_id. */
  voterIds?: Map<string, number>;
}

/** `{ id }` when the file gives the row's id (spec, "Restores"), else nothing: the sequence assigns it. */
const givenId = (row: { id?: number }) => (row.id === undefined ? {} : { id: row.id });

/**
 * Inserts the whole project of `doc` (as validateSnapshot returned it: refs resolved, defaults
 * filled) and returns the id map (spec, "Id map"). `now` (RFC 3339) stands in for every timestamp
 * the file leaves null; `keep` gives ids carried over from a replaced project; `progress` is told
 * after each chunk. Ids the file gives are inserted as they are, after each table's id sequence
 * has been moved past the highest one. Throws only on a database error or an importer bug; the
 * caller's transaction then rolls everything back.
 */
export async function writeProject(
  trx: Trx,
  doc: SnapshotDocument,
  now: string,
  keep: KeptIds = {},
  progress: ProgressSink = () => {},
): Promise<IdMap> {
  await advanceSequences(trx, doc);
  const p = doc.project;
  const { id: projectId } = await trx
    .insertInto("projects")
    .values({
      ...(keep.projectId === undefined ? {} : { id: keep.projectId }),
      slug: p.slug,
      name: p.name,
      description: p.description,
      logo_url: p.logo_url,
      banner_url: p.banner_url,
      currency_symbol: p.currency_symbol,
      show_branding: p.show_branding,
      is_private: p.is_private,
      plan: p.plan,
      sso_secret: p.sso_secret,
      stripe_webhook_secret: p.stripe_webhook_secret,
      paddle_webhook_secret: p.paddle_webhook_secret,
      allowed_origins: p.allowed_origins,
      // Objects, not JSON text: postgres-js would store a string parameter as a jsonb string.
      settings: p.settings,
      theme: p.theme,
      // The object as a jsonb parameter, like settings and theme (the column is typed as text on write).
      notification_settings: sql<string>`${sql.val(p.notifications)}::jsonb`,
      created_at: now,
      updated_at: now,
    })
    .returning("id")
    .executeTakeFirstOrThrow();

  // A key restored from its digest has no plaintext to take a hint from: its hint stays null.
  await insertUnnest(
    trx,
    "api_keys",
    { project_id: "int", kind: "text", key_hash: "text", hint: "text", created_at: "timestamptz" },
    doc.keys.map((key) => ({
      project_id: projectId,
      kind: key.kind,
      key_hash: keyDigest(key),
      hint: "key" in key && key.key !== undefined ? keyHint(key.key) : null,
      created_at: now,
    })),
    progress,
  );

  const tagIds = await insertByRef(
    "tags",
    doc.tags,
    (tag) => ({ ...givenId(tag), project_id: projectId, name: tag.name }),
    (chunk) => trx.insertInto("tags").values(chunk).returning("id").execute(),
    progress,
  );

  const tierIds = await insertByRef(
    "tiers",
    doc.tiers,
    (tier) => ({
      ...givenId(tier),
      project_id: projectId,
      name: tier.name,
      mrr_cents: tier.mrr_cents,
      multiplier: tier.multiplier,
      stripe_price_ids: tier.stripe_price_ids,
      paddle_price_ids: tier.paddle_price_ids,
    }),
    (chunk) => trx.insertInto("tiers").values(chunk).returning("id").execute(),
    progress,
  );
  const multiplierOfTier = new Map(doc.tiers.map((tier) => [tier.ref, tier.multiplier]));

  const boardIds = await insertByRef(
    "boards",
    doc.boards,
    (board, index) => ({
      ...givenId(board),
      project_id: projectId,
      kind: board.kind,
      name: board.name,
      slug: board.slug!,
      position: index,
    }),
    (chunk) => trx.insertInto("boards").values(chunk).returning("id").execute(),
    progress,
  );

  const columnList = doc.boards.flatMap((board) => board.columns.map((column) => ({ ref: column.ref, board, column })));
  const columnIds = await insertByRef(
    "columns",
    columnList,
    ({ board, column }) => ({
      ...givenId(column),
      project_id: projectId,
      board_id: need(boardIds, board.ref).id,
      name: column.name,
      color: column.color,
      position: column.position ?? 0,
      is_votable: column.is_votable,
      status: column.status,
    }),
    (chunk) => trx.insertInto("columns").values(chunk).returning("id").execute(),
    progress,
  );
  const columnStatus = new Map(columnList.map(({ column }) => [column.ref, column.status]));

  const voterIds = await insertByRef(
    "voters",
    doc.voters,
    (v) => ({
      // The same voter_id keeps its internal id across a replace: writes that resolved the voter
      // before the replace and waited for it still name the right row.
      ...(v.voter_id === undefined || !keep.voterIds?.has(v.voter_id) ? {} : { id: keep.voterIds.get(v.voter_id)! }),
      public_id: v.voter_id ?? generateVoterId(),
      project_id: projectId,
      kind: v.kind,
      anon_token_hash: anonTokenDigest(v)?.digest ?? null,
      sso_id: v.sso_id,
      display_name: v.display_name ?? generateHandle(),
      email: v.email,
      role: v.role,
      banned: v.banned,
      company: v.company,
      tier_id: v.tier === null ? null : need(tierIds, v.tier).id,
      mrr_override_cents: v.mrr_override_cents,
      stripe_customer_id: v.stripe_customer_id,
      paddle_customer_id: v.paddle_customer_id,
      subscription_id: v.subscription_id,
      subscription_status: v.subscription_status,
      subscribed_at: v.subscribed_at,
      trial_ends_at: v.trial_ends_at,
      canceled_at: v.canceled_at,
      last_synced_at: v.last_synced_at,
      churned: v.churned,
      churned_at: v.churned_at,
      churn_source: v.churn_source,
      email_unsubscribed: v.email_unsubscribed,
      created_at: v.created_at ?? now,
      updated_at: v.created_at ?? now,
    }),
    (chunk) => trx.insertInto("voters").values(chunk).returning(["id", "public_id"]).execute(),
    progress,
  );
  const weightOfVoter = new Map(doc.voters.map((v) => [v.ref, v.tier === null ? 1 : (multiplierOfTier.get(v.tier) ?? 1)]));

  const boardKind = new Map(doc.boards.map((board) => [board.ref, board.kind]));
  const featureIds = await insertByRef(
    "features",
    doc.features,
    (f) => {
      const archived = f.status === "archived";
      // Roadmap features report their column's status (spec, "Document", features.status).
      const status = archived ? "archived" : boardKind.get(f.board) === "roadmap" ? columnStatus.get(f.column!)! : (f.status ?? "open");
      return {
        ...givenId(f),
        project_id: projectId,
        board_id: need(boardIds, f.board).id,
        column_id: archived || status === "archived" || f.column === null ? null : need(columnIds, f.column).id,
        status,
        heading: f.heading,
        description: f.description,
        author_voter_id: f.author === null ? null : need(voterIds, f.author).id,
        is_approved: f.is_approved,
        is_pinned: f.is_pinned,
        position: f.position ?? 0,
        progress: f.progress,
        view_count: f.view_count,
        effort: f.effort,
        developer_response: f.developer_response,
        response_is_denial: f.response_is_denial,
        linked_feature_id: null,
        start_date: f.start_date,
        target_date: f.target_date,
        created_at: f.created_at ?? now,
        updated_at: f.updated_at ?? now,
      };
    },
    (chunk) => trx.insertInto("features").values(chunk).returning("id").execute(),
    progress,
  );

  // Duplicates may point forward in the file, so links are set once every feature has an id.
  const links = doc.features
    .filter((f) => f.linked_feature !== null)
    .map((f) => [need(featureIds, f.ref).id, need(featureIds, f.linked_feature!).id] as const);
  for (const chunk of chunks(links, 5_000)) {
    const values = sql.join(chunk.map(([id, linked]) => sql`(${id}::int, ${linked}::int)`));
    await sql`UPDATE features AS f SET linked_feature_id = v.linked
      FROM (VALUES ${values}) AS v(id, linked) WHERE f.id = v.id`.execute(trx);
  }

  await insertUnnest(
    trx,
    "feature_tags",
    { feature_id: "int", tag_id: "int" },
    doc.features.flatMap((f) => f.tags.map((tag) => ({ feature_id: need(featureIds, f.ref).id, tag_id: need(tagIds, tag).id }))),
    progress,
  );

  await insertUnnest(
    trx,
    "votes",
    { feature_id: "int", voter_id: "int", project_id: "int", weight: "int", created_at: "timestamptz" },
    doc.votes.map((vote) => ({
      feature_id: need(featureIds, vote.feature).id,
      voter_id: need(voterIds, vote.voter).id,
      project_id: projectId,
      weight: need(weightOfVoter, vote.voter),
      created_at: vote.created_at ?? now,
    })),
    progress,
  );

  await writeMerges(trx, doc, projectId, { featureIds, columnIds, voterIds, weightOfVoter }, now, progress);

  // Top-level comments first, so every reply's parent already has an id.
  const commentIds = new Map<string, { id: number }>();
  for (const level of [doc.comments.filter((c) => c.parent === null), doc.comments.filter((c) => c.parent !== null)]) {
    const ids = await insertByRef(
      "comments",
      level,
      (c) => ({
        ...givenId(c),
        project_id: projectId,
        feature_id: need(featureIds, c.feature).id,
        parent_id: c.parent === null ? null : need(commentIds, c.parent).id,
        voter_id: need(voterIds, c.voter).id,
        content: c.content,
        created_at: c.created_at ?? now,
      }),
      (chunk) => trx.insertInto("comments").values(chunk).returning("id").execute(),
      progress,
    );
    for (const [ref, id] of ids) commentIds.set(ref, id);
  }

  await insertUnnest(
    trx,
    "comment_likes",
    { comment_id: "int", voter_id: "int", created_at: "timestamptz" },
    doc.likes.map((like) => ({
      comment_id: need(commentIds, like.comment).id,
      voter_id: need(voterIds, like.voter).id,
      created_at: now,
    })),
    progress,
  );

  const releaseIds = await insertByRef(
    "releases",
    doc.releases,
    (r) => ({
      ...givenId(r),
      project_id: projectId,
      name: r.name,
      slug: r.slug!,
      body: r.body,
      body_html: renderMarkdown(r.body),
      is_featured: r.is_featured,
      published_at: r.published_at,
      // An import records no events (a restore or a seed): a release already public counts as
      // announced; one scheduled later is announced by the publication task at its time.
      publication_recorded: r.published_at !== null && Date.parse(r.published_at) <= Date.parse(now),
      view_count: r.view_count,
      created_at: now,
    }),
    (chunk) => trx.insertInto("releases").values(chunk).returning("id").execute(),
    progress,
  );

  await insertUnnest(
    trx,
    "release_features",
    { release_id: "int", feature_id: "int", changelog_type: "text", position: "int" },
    doc.releases.flatMap((r) =>
      r.features.map((entry, position) => ({
        release_id: need(releaseIds, r.ref).id,
        feature_id: need(featureIds, entry.feature).id,
        changelog_type: entry.changelog_type,
        position,
      })),
    ),
    progress,
  );

  const messageIds = await insertByRef(
    "messages",
    doc.messages,
    (m) => ({
      ...givenId(m),
      project_id: projectId,
      title: m.title,
      body: m.body,
      kind: m.kind,
      presentation: m.presentation,
      priority: m.priority,
      action_label: m.action_label,
      action_url: m.action_url,
      is_dismissible: m.is_dismissible,
      platforms: m.platforms,
      min_app_version: m.min_app_version,
      max_app_version: m.max_app_version,
      starts_at: m.starts_at,
      ends_at: m.ends_at,
      // The format carries no updated_at; taking created_at keeps an export round trip stable.
      created_at: m.created_at ?? now,
      updated_at: m.created_at ?? now,
    }),
    (chunk) => trx.insertInto("messages").values(chunk).returning("id").execute(),
    progress,
  );

  await insertUnnest(
    trx,
    "message_dismissals",
    { message_id: "int", voter_id: "int", created_at: "timestamptz" },
    doc.dismissals.map((d) => ({
      message_id: need(messageIds, d.message).id,
      voter_id: need(voterIds, d.voter).id,
      created_at: now,
    })),
    progress,
  );

  await writeWebhooks(trx, doc, projectId, now, progress);

  // Only this list subscribes anyone: the votes, comments and suggestions above made none.
  await insertInChunks(
    doc.subscriptions.map((s) => ({
      feature_id: need(featureIds, s.feature).id,
      voter_id: need(voterIds, s.voter).id,
      project_id: projectId,
      reason: s.reason,
      opted_out: s.opted_out,
      created_at: s.created_at ?? now,
    })),
    (chunk) =>
      trx
        .insertInto("subscriptions")
        .values(chunk)
        .execute()
        .then(() => chunk),
    (done) => progress("subscriptions", done, doc.subscriptions.length),
  );

  // Imports' source ids (imports-v3.md, "How an import runs" rule 4): a restored project is
  // still safe to import into again.
  const sourceOf = (
    kind: ImportSourceKind,
    record: { import_source: { source: "canny" | "fider" | "csv"; id: string } | null },
    target: number,
    voter: number | null = null,
  ) =>
    record.import_source === null
      ? []
      : [
          {
            project_id: projectId,
            source: record.import_source.source,
            kind,
            source_id: record.import_source.id,
            target_id: target,
            target_voter_id: voter,
          },
        ];
  await insertUnnest(
    trx,
    "import_sources",
    { project_id: "int", source: "text", kind: "text", source_id: "text", target_id: "int", target_voter_id: "int" },
    [
      ...doc.boards.flatMap((b) => sourceOf("board", b, need(boardIds, b.ref).id)),
      ...doc.tags.flatMap((t) => sourceOf("tag", t, need(tagIds, t.ref).id)),
      ...doc.voters.flatMap((v) => sourceOf("voter", v, need(voterIds, v.ref).id)),
      ...doc.features.flatMap((f) => sourceOf("feature", f, need(featureIds, f.ref).id)),
      ...doc.votes.flatMap((v) => sourceOf("vote", v, need(featureIds, v.feature).id, need(voterIds, v.voter).id)),
      ...doc.comments.flatMap((c) => sourceOf("comment", c, need(commentIds, c.ref).id)),
      ...doc.releases.flatMap((r) => sourceOf("release", r, need(releaseIds, r.ref).id)),
    ],
    progress,
  );

  progress("counters", 0, 1);
  await computeCounters(trx, projectId);

  const ids = <T, V>(map: Map<string, T>, pick: (value: T) => V) => Object.fromEntries([...map].map(([ref, value]) => [ref, pick(value)]));
  return {
    project: { slug: p.slug },
    ids: {
      // The API addresses the roadmap as board 0 (contract, BoardEntry.id), not by its row id.
      boards: Object.fromEntries(doc.boards.map((b) => [b.ref, b.kind === "roadmap" ? 0 : need(boardIds, b.ref).id])),
      columns: ids(columnIds, (row) => row.id),
      tags: ids(tagIds, (row) => row.id),
      tiers: ids(tierIds, (row) => row.id),
      voters: ids(voterIds, (row) => row.public_id),
      features: ids(featureIds, (row) => row.id),
      comments: ids(commentIds, (row) => row.id),
      releases: ids(releaseIds, (row) => row.id),
      messages: ids(messageIds, (row) => row.id),
    },
  };
}

/** Ids of rows already written that the merge records point to. */
interface MergeRefs {
  featureIds: Map<string, { id: number }>;
  columnIds: Map<string, { id: number }>;
  voterIds: Map<string, { id: number }>;
  weightOfVoter: Map<string, number>;
}

/**
 * Writes the merge record of every merged feature (owner Rule 2; table feature_merges and its
 * votes, migration 2026-11-23T10-00-00), so that an unmerge after the import puts back exactly
 * what it would have before. Call after the votes: a moved vote's record takes the time and
 * weight of the vote the file has on the target, which is what an unmerge matches to move it
 * back. A kept voter's duplicate vote takes its time from kept_vote_times, else the time of its
 * target vote (the earlier of both after a merge), else `now`. Weights are the voter's tier
 * multiplier, as for every imported vote. The merge replaced linked_feature unless it already
 * named the target (`previous_linked_feature`).
 */
async function writeMerges(trx: Trx, doc: SnapshotDocument, projectId: number, refs: MergeRefs, now: string, progress: ProgressSink) {
  const merged = doc.features.filter((f) => f.merge !== null);
  if (merged.length === 0) return;
  const voteTime = new Map(doc.votes.map((vote) => [JSON.stringify([vote.voter, vote.feature]), vote.created_at ?? now]));
  const mergeIds = await insertByRef(
    "feature_merges",
    merged,
    (f) => {
      const merge = f.merge!;
      return {
        project_id: projectId,
        source_id: need(refs.featureIds, f.ref).id,
        target_id: need(refs.featureIds, merge.into).id,
        previous_status: merge.previous_status,
        previous_column_id: merge.previous_column === null ? null : need(refs.columnIds, merge.previous_column).id,
        previous_linked_feature_id: merge.previous_linked_feature === null ? null : need(refs.featureIds, merge.previous_linked_feature).id,
        linked_set_by_merge: merge.previous_linked_feature !== merge.into,
        created_at: now,
      };
    },
    (chunk) => trx.insertInto("feature_merges").values(chunk).returning("id").execute(),
    progress,
  );
  const rows = merged.flatMap((f) => {
    const merge = f.merge!;
    const mergeId = need(mergeIds, f.ref).id;
    const onTarget = (voter: string) => voteTime.get(JSON.stringify([voter, merge.into]));
    const times = new Map(merge.kept_vote_times.map((entry) => [entry.voter, entry]));
    const row = (voter: string, kind: "moved" | "duplicate", createdAt: string, targetCreatedAt: string | null) => ({
      merge_id: mergeId,
      voter_id: need(refs.voterIds, voter).id,
      kind,
      weight: need(refs.weightOfVoter, voter),
      created_at: createdAt,
      target_weight: targetCreatedAt === null ? null : need(refs.weightOfVoter, voter),
      target_created_at: targetCreatedAt,
    });
    return [
      // Validation made sure every moved voter has its vote on the target.
      ...merge.moved_voters.map((voter) => row(voter, "moved", onTarget(voter)!, null)),
      ...merge.kept_voters.map((voter) => {
        const time = times.get(voter);
        return row(voter, "duplicate", time?.duplicate_created_at ?? onTarget(voter) ?? now, time?.target_created_at ?? null);
      }),
    ];
  });
  await insertUnnest(
    trx,
    "feature_merge_votes",
    {
      merge_id: "int",
      voter_id: "int",
      kind: "text",
      weight: "int",
      created_at: "timestamptz",
      target_weight: "int",
      target_created_at: "timestamptz",
    },
    rows,
    progress,
  );
}

/**
 * Writes the project's webhooks (spec, "Webhooks, merges and engagement"): ids kept when given
 * (the table's id is GENERATED ALWAYS, hence OVERRIDING SYSTEM VALUE), secrets exactly as given so
 * receivers keep verifying, a new secret when the file gives none. The run of failures starts
 * at 0: the delivery log is not carried.
 */
async function writeWebhooks(trx: Trx, doc: SnapshotDocument, projectId: number, now: string, progress: ProgressSink) {
  for (const [index, w] of doc.webhooks.entries()) {
    await sql`INSERT INTO webhooks (id, project_id, url, events, description, enabled, disabled_reason, secret,
        previous_secret, previous_secret_expires_at, created_at)
      OVERRIDING SYSTEM VALUE
      VALUES (${w.id === undefined ? sql`DEFAULT` : sql`${w.id}::int`}, ${projectId}::int, ${w.url}, ${w.events}::text[],
        ${w.description}, ${w.enabled}, ${w.disabled_reason}, ${w.secret ?? generateWebhookSecret()},
        ${w.previous_secret}, ${w.previous_secret_expires_at}::timestamptz, ${w.created_at ?? now}::timestamptz)`.execute(trx);
    progress("webhooks", index + 1, doc.webhooks.length);
  }
}

/**
 * Moves the id sequence of every table the file gives ids for past the highest given id, so
 * rows created later (by the API or another import) never collide with them. Never moves a
 * sequence back. Sequences are not transactional: a rolled-back import leaves only a gap.
 */
async function advanceSequences(trx: Trx, doc: SnapshotDocument) {
  for (const [table, rows] of rowsWithIds(doc)) {
    const highest = rows.reduce((max, row) => Math.max(max, row.id ?? 0), 0);
    if (highest === 0) continue;
    await sql`SELECT setval(seq, ${highest}::int) FROM (SELECT pg_get_serial_sequence(${table}, 'id')::regclass AS seq) AS s
      WHERE coalesce(pg_sequence_last_value(seq), 0) < ${highest}::int`.execute(trx);
  }
}
