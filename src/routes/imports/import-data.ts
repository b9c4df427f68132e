/**
 * The shape every import source is read into before anything is written (imports-v3.md): the
 * readers (src/routes/imports/readers/) turn a Canny, Fider or CSV export into one `ImportData`, and the
 * writer (src/routes/imports/writer/) maps it onto a project in one transaction. Records refer to each
 * other by the source's own ids (strings); every record carries `path`, naming it in warnings
 * (`posts.json[3]`, `features.csv:12`).
 *
 * Readers only read and normalise: they drop what the source itself hides (private tags,
 * internal or deleted comments, Fider's deleted posts) with a warning and a `skipped` count, and
 * leave every decision that needs the project (matching voters, statuses through `status_map`,
 * boards, merges, counters) to the writer.
 */

/** Where the records come from (ImportObject.source). */
export const IMPORT_SOURCES = ["canny", "fider", "csv"] as const;
export type ImportSourceName = (typeof IMPORT_SOURCES)[number];

/** The record kinds ImportObject.counts reports, in its order. */
export const IMPORT_COUNT_KINDS = [
  "boards",
  "tags",
  "voters",
  "features",
  "votes",
  "comments",
  "releases",
  "merges",
  "subscriptions",
] as const;
export type ImportCountKind = (typeof IMPORT_COUNT_KINDS)[number];

/** One warning of ImportObject.warnings: `path` names the record, `message` says what was done. */
export interface ImportWarning {
  path: string;
  message: string;
}

/** A person of the source: author, voter or commenter (imports-v3.md, "Mapping", Voters). */
export interface ImportPerson {
  /** The source's id of the person (Canny user id, Fider user id, CSV: `email:<lower-case email>` or `name:<name>`). */
  sourceId: string;
  /** The person's user id in the customer's own system (Canny `userID`), matched against `sso_id`. */
  ssoId: string | null;
  name: string | null;
  email: string | null;
  /** Source admins are editors, Fider administrators owners. */
  role: "voter" | "editor" | "owner";
  /** The name of the person's company (Canny companies), or null. */
  company: string | null;
  /** Deleted in the source (Fider users.status 2): imported as `Imported user` without email. */
  deleted: boolean;
  path: string;
}

/** A board of the source (Canny boards, CSV `board` values; Fider has one board). */
export interface ImportBoard {
  sourceId: string;
  name: string;
  path: string;
}

/** A public tag of the source (Canny tags and categories, Fider public tags, CSV tag names). */
export interface ImportTag {
  sourceId: string;
  name: string;
  /** `#rrggbb`, or null when the source has no colour. */
  color: string | null;
  path: string;
}

/** A post / idea / row of the source. */
export interface ImportFeature {
  /** Null only for CSV rows without `source_id` (they cannot be matched on a later run). */
  sourceId: string | null;
  /** The title as the source has it (the writer cuts it to 254 characters with a warning). */
  title: string;
  /** Plain text / Markdown, image addresses already appended on lines of their own. */
  description: string;
  /**
   * The source's status name as `status_map` keys name it: Canny's strings (`under review`),
   * Fider's names (`open`, `started`, `completed`, `declined`, `planned`), the CSV cell as
   * written; null when the source gives none.
   */
  status: string | null;
  boardSourceId: string | null;
  tagSourceIds: string[];
  authorSourceId: string | null;
  /** RFC 3339, or null (the import's time). */
  createdAt: string | null;
  developerResponse: string | null;
  /** Fider `declined`: the response is a denial. */
  responseIsDenial: boolean;
  /** `YYYY-MM-DD` (Canny `eta` where it parses), or null. */
  targetDate: string | null;
  /** False for posts the source holds for moderation (Fider `is_approved` false). */
  approved: boolean;
  /** The post this one duplicates (Canny `mergeHistory`, Fider status 5 `original_id`); chains are the writer's. */
  mergedIntoSourceId: string | null;
  path: string;
}

export interface ImportVote {
  featureSourceId: string;
  personSourceId: string;
  createdAt: string | null;
  path: string;
}

export interface ImportComment {
  sourceId: string | null;
  featureSourceId: string;
  /** The comment replied to, at any depth (the writer hangs it under the top-level one). */
  parentSourceId: string | null;
  personSourceId: string | null;
  content: string;
  createdAt: string | null;
  path: string;
}

/** A changelog entry (Canny entries). */
export interface ImportRelease {
  sourceId: string;
  name: string;
  /** Markdown. */
  body: string;
  /** RFC 3339 when published, else null. */
  publishedAt: string | null;
  /** RFC 3339 when scheduled, else null. */
  scheduledFor: string | null;
  changelogType: "new" | "improvement" | "fix" | null;
  featureSourceIds: string[];
  path: string;
}

/** What the source says of a person following a post (Fider post_subscribers). */
export interface ImportSubscription {
  featureSourceId: string;
  personSourceId: string;
  /** False: the person unsubscribed (an opt-out the writer keeps). */
  active: boolean;
  path: string;
}

/** Everything one export holds, normalised; the writer's only input besides the options. */
export interface ImportData {
  source: ImportSourceName;
  people: ImportPerson[];
  boards: ImportBoard[];
  tags: ImportTag[];
  features: ImportFeature[];
  votes: ImportVote[];
  comments: ImportComment[];
  releases: ImportRelease[];
  subscriptions: ImportSubscription[];
  /** Warnings of the reading step (skipped records, ignored columns), in source order. */
  warnings: ImportWarning[];
  /** Records the reader dropped, per kind (counted into ImportObject.counts.<kind>.skipped). */
  skipped: Partial<Record<ImportCountKind, number>>;
}

/** Options in force (ImportObject.options). */
export interface ImportOptions {
  boards: "roadmap" | "custom";
  /** Source status name -> one of the six statuses. */
  statusMap: Record<string, "open" | "planned" | "in_progress" | "done" | "denied" | "archived">;
}

/** A source that cannot be read: the job fails with `validation_failed` naming `file`. */
export class ImportFileError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ImportFileError";
  }
}
