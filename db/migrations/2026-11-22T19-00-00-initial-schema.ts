/**
 * Initial schema: the whole data model of the v3 contract (read and write side).
 * Frozen: never edit after it has shipped; add a new migration instead.
 *
 * Counters that lists sort on (vote_count, weighted_score, trending_score, comment_count,
 * like_count, voters.vote_count, projects.voter_count) live on their rows and are changed in the
 * same transaction as the vote, comment or like that moves them (docs/architecture.md, "Data rules").
 */
import { type Kysely, sql } from "kysely";

const statements = [
  sql`CREATE EXTENSION IF NOT EXISTS pg_trgm`,
  sql`CREATE TABLE projects (
    id serial PRIMARY KEY,
    slug text NOT NULL UNIQUE,
    name text NOT NULL,
    description text,
    logo_url text,
    banner_url text,
    currency_symbol text NOT NULL DEFAULT '$',
    show_branding boolean NOT NULL DEFAULT true,
    is_private boolean NOT NULL DEFAULT false,
    plan text NOT NULL DEFAULT 'pro',
    sso_secret text,
    allowed_origins text[] NOT NULL DEFAULT '{}',
    settings jsonb NOT NULL,
    theme jsonb NOT NULL,
    voter_count integer NOT NULL DEFAULT 0 CHECK (voter_count >= 0),
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now()
  )`,
  sql`CREATE TABLE api_keys (
    id serial PRIMARY KEY,
    project_id integer NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    kind text NOT NULL CHECK (kind IN ('secret', 'embed')),
    key_hash text NOT NULL UNIQUE,
    created_at timestamptz NOT NULL DEFAULT now()
  )`,
  sql`CREATE INDEX api_keys_project_idx ON api_keys (project_id, kind)`,
  sql`CREATE TABLE boards (
    id serial PRIMARY KEY,
    project_id integer NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    kind text NOT NULL CHECK (kind IN ('roadmap', 'custom')),
    name text NOT NULL,
    slug text NOT NULL,
    position integer NOT NULL DEFAULT 0,
    UNIQUE (project_id, slug)
  )`,
  sql`CREATE UNIQUE INDEX boards_one_roadmap_idx ON boards (project_id) WHERE kind = 'roadmap'`,
  sql`CREATE TABLE columns (
    id serial PRIMARY KEY,
    project_id integer NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    board_id integer NOT NULL REFERENCES boards(id) ON DELETE CASCADE,
    name text NOT NULL,
    color text,
    position integer NOT NULL DEFAULT 0,
    is_votable boolean NOT NULL DEFAULT true,
    status text
  )`,
  sql`CREATE INDEX columns_board_idx ON columns (board_id, position)`,
  sql`CREATE TABLE tags (
    id serial PRIMARY KEY,
    project_id integer NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    name text NOT NULL
  )`,
  sql`CREATE INDEX tags_project_idx ON tags (project_id)`,
  sql`CREATE TABLE tiers (
    id serial PRIMARY KEY,
    project_id integer NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    name text NOT NULL,
    mrr_cents integer NOT NULL CHECK (mrr_cents >= 0),
    multiplier integer NOT NULL DEFAULT 1 CHECK (multiplier >= 1)
  )`,
  sql`CREATE TABLE voters (
    id serial PRIMARY KEY,
    public_id text NOT NULL UNIQUE,
    project_id integer NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    kind text NOT NULL CHECK (kind IN ('anonymous', 'sso')),
    anon_token_hash text UNIQUE,
    sso_id text,
    display_name text NOT NULL,
    email text,
    role text CHECK (role IN ('owner', 'editor', 'viewer')),
    banned boolean NOT NULL DEFAULT false,
    company text,
    tier_id integer REFERENCES tiers(id) ON DELETE SET NULL,
    mrr_override_cents integer CHECK (mrr_override_cents >= 0),
    stripe_customer_id text,
    paddle_customer_id text,
    subscription_id text,
    subscription_status text,
    subscribed_at timestamptz,
    trial_ends_at timestamptz,
    canceled_at timestamptz,
    last_synced_at timestamptz,
    churned boolean NOT NULL DEFAULT false,
    churned_at timestamptz,
    churn_source text,
    vote_count integer NOT NULL DEFAULT 0 CHECK (vote_count >= 0),
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now()
  )`,
  sql`CREATE UNIQUE INDEX voters_sso_idx ON voters (project_id, sso_id) WHERE sso_id IS NOT NULL`,
  sql`CREATE INDEX voters_project_idx ON voters (project_id, id)`,
  sql`CREATE INDEX voters_stripe_idx ON voters (project_id, stripe_customer_id) WHERE stripe_customer_id IS NOT NULL`,
  sql`CREATE INDEX voters_paddle_idx ON voters (project_id, paddle_customer_id) WHERE paddle_customer_id IS NOT NULL`,
  sql`CREATE TABLE features (
    id serial PRIMARY KEY,
    project_id integer NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    board_id integer NOT NULL REFERENCES boards(id) ON DELETE CASCADE,
    column_id integer REFERENCES columns(id) ON DELETE SET NULL,
    status text NOT NULL,
    heading text NOT NULL,
    description text,
    author_voter_id integer REFERENCES voters(id) ON DELETE SET NULL,
    is_approved boolean NOT NULL DEFAULT true,
    is_pinned boolean NOT NULL DEFAULT false,
    position integer NOT NULL DEFAULT 0,
    progress integer CHECK (progress BETWEEN 0 AND 100),
    view_count integer NOT NULL DEFAULT 0,
    effort integer,
    developer_response text,
    response_is_denial boolean NOT NULL DEFAULT false,
    linked_feature_id integer REFERENCES features(id) ON DELETE SET NULL,
    start_date timestamptz,
    target_date timestamptz,
    vote_count integer NOT NULL DEFAULT 0 CHECK (vote_count >= 0),
    weighted_score integer NOT NULL DEFAULT 0 CHECK (weighted_score >= 0),
    trending_score double precision,
    comment_count integer NOT NULL DEFAULT 0 CHECK (comment_count >= 0),
    search_text text GENERATED ALWAYS AS (lower(heading || ' ' || coalesce(description, ''))) STORED,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now()
  )`,
  sql`CREATE INDEX features_project_idx ON features (project_id, id)`,
  sql`CREATE INDEX features_board_top_idx ON features (board_id, is_pinned DESC, vote_count DESC, id DESC)`,
  sql`CREATE INDEX features_board_weighted_idx ON features (board_id, is_pinned DESC, weighted_score DESC, id DESC)`,
  sql`CREATE INDEX features_board_new_idx ON features (board_id, is_pinned DESC, created_at DESC, id DESC)`,
  sql`CREATE INDEX features_column_idx ON features (column_id)`,
  sql`CREATE INDEX features_search_idx ON features USING gin (search_text gin_trgm_ops)`,
  sql`CREATE TABLE feature_tags (
    feature_id integer NOT NULL REFERENCES features(id) ON DELETE CASCADE,
    tag_id integer NOT NULL REFERENCES tags(id) ON DELETE CASCADE,
    PRIMARY KEY (feature_id, tag_id)
  )`,
  sql`CREATE INDEX feature_tags_tag_idx ON feature_tags (tag_id, feature_id)`,
  sql`CREATE TABLE votes (
    feature_id integer NOT NULL REFERENCES features(id) ON DELETE CASCADE,
    voter_id integer NOT NULL REFERENCES voters(id) ON DELETE CASCADE,
    project_id integer NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    weight integer NOT NULL DEFAULT 1 CHECK (weight >= 1),
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (feature_id, voter_id)
  )`,
  sql`CREATE INDEX votes_voter_idx ON votes (voter_id, created_at DESC)`,
  sql`CREATE TABLE comments (
    id serial PRIMARY KEY,
    project_id integer NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    feature_id integer NOT NULL REFERENCES features(id) ON DELETE CASCADE,
    parent_id integer REFERENCES comments(id) ON DELETE CASCADE,
    voter_id integer NOT NULL REFERENCES voters(id) ON DELETE CASCADE,
    content text NOT NULL,
    like_count integer NOT NULL DEFAULT 0 CHECK (like_count >= 0),
    created_at timestamptz NOT NULL DEFAULT now()
  )`,
  sql`CREATE INDEX comments_feature_idx ON comments (feature_id, parent_id, created_at)`,
  sql`CREATE INDEX comments_parent_idx ON comments (parent_id, created_at) WHERE parent_id IS NOT NULL`,
  sql`CREATE TABLE comment_likes (
    comment_id integer NOT NULL REFERENCES comments(id) ON DELETE CASCADE,
    voter_id integer NOT NULL REFERENCES voters(id) ON DELETE CASCADE,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (comment_id, voter_id)
  )`,
  sql`CREATE TABLE releases (
    id serial PRIMARY KEY,
    project_id integer NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    name text NOT NULL,
    slug text NOT NULL,
    body text,
    body_html text,
    is_featured boolean NOT NULL DEFAULT false,
    published_at timestamptz,
    view_count integer NOT NULL DEFAULT 0,
    created_at timestamptz NOT NULL DEFAULT now()
  )`,
  sql`CREATE INDEX releases_project_idx ON releases (project_id, is_featured DESC, published_at DESC)`,
  sql`CREATE TABLE release_features (
    release_id integer NOT NULL REFERENCES releases(id) ON DELETE CASCADE,
    feature_id integer NOT NULL REFERENCES features(id) ON DELETE CASCADE,
    changelog_type text NOT NULL
      CHECK (changelog_type IN ('new', 'improvement', 'fix', 'security', 'breaking_change')),
    position integer NOT NULL DEFAULT 0,
    PRIMARY KEY (release_id, feature_id)
  )`,
  sql`CREATE INDEX release_features_feature_idx ON release_features (feature_id)`,
  sql`CREATE TABLE messages (
    id serial PRIMARY KEY,
    project_id integer NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    title text NOT NULL,
    body text NOT NULL,
    kind text NOT NULL DEFAULT 'info',
    presentation text NOT NULL DEFAULT 'banner',
    priority integer NOT NULL DEFAULT 0,
    action_label text,
    action_url text,
    is_dismissible boolean NOT NULL DEFAULT true,
    platforms text[],
    min_app_version text,
    max_app_version text,
    starts_at timestamptz,
    ends_at timestamptz,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    CHECK (action_label IS NULL OR action_url IS NOT NULL)
  )`,
  sql`CREATE INDEX messages_project_idx ON messages (project_id, priority DESC)`,
  sql`CREATE TABLE message_dismissals (
    message_id integer NOT NULL REFERENCES messages(id) ON DELETE CASCADE,
    voter_id integer NOT NULL REFERENCES voters(id) ON DELETE CASCADE,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (message_id, voter_id)
  )`,
];

export async function up(db: Kysely<any>): Promise<void> {
  for (const statement of statements) await statement.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of [
    "message_dismissals",
    "messages",
    "release_features",
    "releases",
    "comment_likes",
    "comments",
    "votes",
    "feature_tags",
    "features",
    "voters",
    "tiers",
    "tags",
    "columns",
    "boards",
    "api_keys",
    "projects",
  ]) {
    await db.schema.dropTable(table).ifExists().execute();
  }
}
