/**
 * The ImportData a reader fills, with the record bound of imports-v3.md ("How an import runs",
 * rule 6: at most 200,000 records per import). A record is one element of a source list the
 * reader uses (a row of a CSV file, an element of a JSON list, a Canny list answer's item), kept
 * or skipped alike; the people, boards and tags a reader finds embedded in other records are not
 * counted again.
 */
import { type ImportCountKind, type ImportData, ImportFileError, type ImportPerson, type ImportSourceName } from "../import-data.ts";

export const MAX_IMPORT_RECORDS = 200_000;

export class ImportCollector {
  readonly data: ImportData;
  private records = 0;
  private readonly people = new Map<string, ImportPerson>();

  constructor(
    source: ImportSourceName,
    private readonly maxRecords = MAX_IMPORT_RECORDS,
  ) {
    this.data = {
      source,
      people: [],
      boards: [],
      tags: [],
      features: [],
      votes: [],
      comments: [],
      releases: [],
      subscriptions: [],
      warnings: [],
      skipped: {},
    };
  }

  /** Counts `count` source records of `file`; throws ImportFileError past the bound. */
  countRecords(file: string, count: number): void {
    this.records += count;
    if (this.records > this.maxRecords) {
      throw new ImportFileError(`${file}: the import holds more than ${this.maxRecords} records (the bound of one import)`);
    }
  }

  warn(path: string, message: string): void {
    this.data.warnings.push({ path, message });
  }

  /** A record left out, with its warning, counted as `skipped` of `kind`. */
  skip(kind: ImportCountKind, path: string, message: string | null): void {
    this.data.skipped[kind] = (this.data.skipped[kind] ?? 0) + 1;
    if (message !== null) this.warn(path, message);
  }

  person(sourceId: string): ImportPerson | undefined {
    return this.people.get(sourceId);
  }

  /**
   * Adds a person, or completes the one already known under `person.sourceId`: what it lacks
   * (name, email, sso id, company) is filled in, and a higher role wins.
   */
  addPerson(person: ImportPerson): ImportPerson {
    const known = this.people.get(person.sourceId);
    if (known === undefined) {
      this.people.set(person.sourceId, person);
      this.data.people.push(person);
      return person;
    }
    if (known.deleted) return known;
    known.name ??= person.name;
    known.email ??= person.email;
    known.ssoId ??= person.ssoId;
    known.company ??= person.company;
    const rank = { voter: 0, editor: 1, owner: 2 } as const;
    if (rank[person.role] > rank[known.role]) known.role = person.role;
    return known;
  }
}
