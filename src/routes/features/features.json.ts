/**
 * The FeatureObject as JSON text written by Postgres (docs/benchmarks.md, "Targets", page builds: a
 * page build without
 * parsing rows and serializing them again): `featureObjectJson` is the SQL expression of one
 * FeatureObject over a FeatureRow's columns (features.repository.ts withFeatureColumns, under
 * an alias, its `tags` as featureTagsJson text), byte for byte what
 * JSON.stringify(toFeatureObject(row, settings)) writes (features.mapper.ts;
 * test/features.json.test.ts compares both on a varied project).
 *
 * Why the text is built by concatenation and not with json_build_object: Postgres writes json
 * with spaces (`{"id" : 1, ...}`) and jsonb reorders keys, while the cached body, its ETag and
 * the has_voted splice (src/lib/http/boolean-field-overlay.ts) are those of JSON.stringify.
 * Each value goes through one of the helpers below, which write it as JSON.stringify does:
 * strings by to_json (the same escapes: `"`, `\`, \b \f \n \r \t and \u00xx below 0x20),
 * integers and booleans as their text, timestamps as Date.toISOString (UTC, milliseconds,
 * truncated like a driver's Date), null as `null`. Which counters show is decided by the
 * project's settings when the statement is compiled (a hidden counter is null, as in the mapper).
 */
import { type RawBuilder, sql } from "kysely";
import type { ProjectSettings } from "../../../db/schema.ts";

type Expression = RawBuilder<unknown>;

/** A text value as a JSON string, null as `null`. */
function jsonString(value: Expression): RawBuilder<string> {
  return sql<string>`coalesce(to_json(${value}::text)::text, 'null')`;
}

/** An integer as JSON, null as `null`. */
function jsonInteger(value: Expression): RawBuilder<string> {
  return sql<string>`coalesce((${value})::text, 'null')`;
}

function jsonBoolean(value: Expression): RawBuilder<string> {
  return sql<string>`CASE WHEN ${value} THEN 'true' ELSE 'false' END`;
}

/** A timestamptz as Date.toISOString writes it (RFC 3339, UTC, milliseconds), null as `null`. */
function jsonTimestamp(value: Expression): RawBuilder<string> {
  return sql<string>`coalesce('"' || to_char(${value} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') || '"', 'null')`;
}

/** `{"k":v,...}` of already-JSON values, in the given key order. */
function jsonObject(fields: [string, RawBuilder<string>][]): RawBuilder<string> {
  const parts = fields.map(([key, value], i) => sql`${sql.lit(`${i === 0 ? "{" : ","}${JSON.stringify(key)}:`)} || ${value}`);
  return sql<string>`(${sql.join(parts, sql` || `)} || '}')`;
}

/**
 * The FeatureObject of the row under `alias` as JSON text, in the contract's field order
 * (features.mapper.ts toFeatureObject).
 */
export function featureObjectJson(alias: string, settings: ProjectSettings): RawBuilder<string> {
  const col = (name: string) => sql.ref(`${alias}.${name}`) as Expression;
  const hidden = sql<string>`'null'`;
  const score = settings.score_is_weighted ? col("weighted_score") : col("vote_count");
  return jsonObject([
    ["id", jsonInteger(col("id"))],
    ["heading", jsonString(col("heading"))],
    ["description", jsonString(col("description"))],
    ["status", jsonString(col("status"))],
    [
      "board",
      jsonObject([
        // The roadmap is board 0 in the API (contract, BoardEntry.id), whatever its row id.
        ["id", sql<string>`CASE WHEN ${col("board_kind")} = 'roadmap' THEN '0' ELSE (${col("board_id")})::text END`],
        ["kind", jsonString(col("board_kind"))],
        ["name", jsonString(col("board_name"))],
        ["slug", jsonString(col("board_slug"))],
      ]),
    ],
    [
      "column",
      // A feature without a column is in the archived column (features.mapper.ts ARCHIVED_COLUMN).
      sql<string>`CASE WHEN ${col("column_id")} IS NULL THEN '{"id":-1,"name":"Archived","color":null}' ELSE ${jsonObject([
        ["id", jsonInteger(col("column_id"))],
        ["name", jsonString(sql`coalesce(${col("column_name")}, '')`)],
        ["color", jsonString(col("column_color"))],
      ])} END`,
    ],
    ["changelog_type", sql<string>`CASE WHEN ${col("release_id")} IS NULL THEN 'null' ELSE ${jsonString(col("changelog_type"))} END`],
    ["comment_count", settings.show_comments ? jsonInteger(col("comment_count")) : hidden],
    ["vote_count", settings.show_votes ? jsonInteger(col("vote_count")) : hidden],
    ["score", settings.show_votes ? jsonInteger(score) : hidden],
    ["score_is_weighted", sql.lit(settings.score_is_weighted ? "true" : "false") as RawBuilder<string>],
    ["view_count", settings.show_views ? jsonInteger(col("view_count")) : hidden],
    ["progress", settings.show_progress ? jsonInteger(col("progress")) : hidden],
    ["has_voted", jsonBoolean(col("has_voted"))],
    ["is_approved", jsonBoolean(col("is_approved"))],
    ["is_pinned", jsonBoolean(col("is_pinned"))],
    ["developer_response", jsonString(col("developer_response"))],
    ["response_is_denial", jsonBoolean(col("response_is_denial"))],
    [
      "linked_feature",
      sql<string>`CASE WHEN ${col("linked_id")} IS NULL THEN 'null' ELSE ${jsonObject([
        ["id", jsonInteger(col("linked_id"))],
        ["heading", jsonString(sql`coalesce(${col("linked_heading")}, '')`)],
      ])} END`,
    ],
    [
      "release",
      sql<string>`CASE WHEN ${col("release_id")} IS NULL THEN 'null' ELSE ${jsonObject([
        ["id", jsonInteger(col("release_id"))],
        ["name", jsonString(sql`coalesce(${col("release_name")}, '')`)],
      ])} END`,
    ],
    // Inside the object, so a row whose object is not written (a kept one) skips the lookup.
    ["tags", featureTagsJson(col("id"))],
    ["start_date", jsonTimestamp(col("start_date"))],
    ["target_date", jsonTimestamp(col("target_date"))],
    ["created_at", jsonTimestamp(col("created_at"))],
    ["updated_at", jsonTimestamp(col("updated_at"))],
  ]);
}

/**
 * The tags of the feature `featureId` (an SQL reference) as the JSON text of FeatureObject.tags:
 * `[{"id":..,"name":..},...]` by name, case-insensitive byte order, as withFeatureColumns orders them.
 */
export function featureTagsJson(featureId: Expression): RawBuilder<string> {
  return sql<string>`(SELECT '[' || coalesce(string_agg('{"id":' || t.id::text || ',"name":' || to_json(t.name::text)::text || '}', ','
      ORDER BY lower(t.name) COLLATE "C", t.name COLLATE "C", t.id), '') || ']'
    FROM feature_tags ft JOIN tags t ON t.id = ft.tag_id
    WHERE ft.feature_id = ${featureId})`;
}
