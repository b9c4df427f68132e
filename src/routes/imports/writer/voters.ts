/**
 * Source people -> voters (imports-v3.md, "Mapping", Voters). Matched in order to the voter an
 * earlier import of the same source mapped (import_sources), a project voter whose sso_id is the
 * person's ssoId, a voter with the same email (case-insensitive, lowest id first); otherwise a
 * voter of kind `sso` is created. Only created voters are remembered in import_sources (a matched
 * voter is matched again on every run): a re-run updates name and email of those, and they alone
 * are claimable by an SSO token's email while their sso_id is null (imports-v3.md, "Claiming").
 */
import { sql } from "kysely";
import { withoutBilling } from "../../../lib/data/resolution.repository.ts";
import { generateVoterId } from "../../../lib/rules/secrets.ts";
import type { ImportPerson } from "../import-data.ts";
import { BATCH, existingIds, type WriteContext } from "./context.ts";

/** Display name of a person without a name and email, or deleted in the source. */
export const IMPORTED_USER = "Imported user";
/** The source id of the one voter standing for records whose source names no person. */
export const UNKNOWN_PERSON = "~unknown";

const ROLE = { voter: null, editor: "editor", owner: "owner" } as const;

function displayName(person: ImportPerson): string {
  if (person.deleted) return IMPORTED_USER;
  const name = person.name?.trim();
  if (name) return name.slice(0, 100);
  // An email without a name: its local part, not the whole address (display names are public).
  const local = person.email?.split("@")[0]?.trim();
  return local ? local.slice(0, 100) : IMPORTED_USER;
}

function emailOf(person: ImportPerson): string | null {
  if (person.deleted) return null;
  const email = person.email?.trim();
  return email ? email : null;
}

/**
 * Maps every person of `people` (plus the placeholder UNKNOWN_PERSON) to a voter id; returns
 * source person id -> voter id. People whose mapped voter was deleted since are skipped (absent
 * from the map) with a warning.
 */
export async function writeVoters(ctx: WriteContext, people: ImportPerson[]): Promise<Map<string, number>> {
  const { trx, projectId } = ctx;
  const result = new Map<string, number>();
  const unique = new Map<string, ImportPerson>();
  for (const person of people) if (!unique.has(person.sourceId)) unique.set(person.sourceId, person);
  const all = [...unique.values()];
  const mappedIds = all.flatMap((p) => {
    const m = ctx.mapped.voter.get(p.sourceId);
    return m ? [m.target] : [];
  });
  const alive = await existingIds(trx, "voters", projectId, mappedIds);

  const rest: ImportPerson[] = [];
  const updates: { id: number; name: string; email: string | null }[] = [];
  for (const person of all) {
    const m = ctx.mapped.voter.get(person.sourceId);
    if (!m) {
      rest.push(person);
      continue;
    }
    if (!alive.has(m.target)) {
      ctx.counts.voters.skipped += 1;
      ctx.warn(person.path, "the voter an earlier import made of this person was deleted since; not re-created");
    } else {
      result.set(person.sourceId, m.target);
      ctx.counts.voters.updated += 1;
      updates.push({ id: m.target, name: displayName(person), email: emailOf(person) });
    }
    ctx.tick();
  }
  // Mapped voters are voters an import made: they take the source's name and email again.
  for (let i = 0; i < updates.length; i += BATCH) {
    const batch = updates.slice(i, i + BATCH);
    await sql`UPDATE voters SET display_name = u.name, email = u.email, updated_at = ${ctx.now}
      FROM unnest(${batch.map((u) => u.id)}::int[], ${batch.map((u) => u.name)}::text[], ${batch.map((u) => u.email)}::text[])
        AS u(id, name, email)
      WHERE voters.id = u.id AND voters.project_id = ${projectId}
        AND (voters.display_name, voters.email) IS DISTINCT FROM (u.name, u.email)`.execute(trx);
  }

  // Match the rest by sso_id, then by email.
  const ssoIds = [...new Set(rest.flatMap((p) => (p.ssoId ? [p.ssoId] : [])))];
  const emails = [...new Set(rest.flatMap((p) => (emailOf(p) ? [emailOf(p)!.toLowerCase()] : [])))];
  const bySso = new Map<string, number>();
  const byEmail = new Map<string, number>();
  if (ssoIds.length > 0) {
    const rows = await trx
      .selectFrom("voters")
      .select(["id", "sso_id"])
      .where("project_id", "=", projectId)
      .where("sso_id", "=", sql<string>`any(${ssoIds}::text[])`)
      .execute();
    for (const row of rows) bySso.set(row.sso_id!, row.id);
  }
  if (emails.length > 0) {
    const rows = await sql<{ id: number; email: string }>`SELECT min(id) AS id, lower(email) AS email FROM voters
      WHERE project_id = ${projectId} AND lower(email) = any(${emails}::text[]) GROUP BY lower(email)`.execute(trx);
    for (const row of rows.rows) byEmail.set(row.email, row.id);
  }

  const toCreate: { person: ImportPerson; publicId: string }[] = [];
  // Two people of one source sharing an SSO id or an email are one voter.
  const pendingSso = new Map<string, ImportPerson>();
  const pendingEmail = new Map<string, ImportPerson>();
  const sameAs = new Map<string, ImportPerson>();
  for (const person of rest) {
    const email = emailOf(person)?.toLowerCase();
    const matched = (person.ssoId ? bySso.get(person.ssoId) : undefined) ?? (email ? byEmail.get(email) : undefined);
    if (matched !== undefined) {
      result.set(person.sourceId, matched);
      ctx.counts.voters.updated += 1;
      ctx.tick();
      continue;
    }
    const twin = (person.ssoId ? pendingSso.get(person.ssoId) : undefined) ?? (email ? pendingEmail.get(email) : undefined);
    if (twin) {
      sameAs.set(person.sourceId, twin);
      continue;
    }
    if (person.ssoId) pendingSso.set(person.ssoId, person);
    if (email) pendingEmail.set(email, person);
    toCreate.push({ person, publicId: generateVoterId() });
  }
  for (let i = 0; i < toCreate.length; i += BATCH) {
    const batch = toCreate.slice(i, i + BATCH);
    const rows = await trx
      .insertInto("voters")
      .values(
        batch.map(({ person, publicId }) => ({
          public_id: publicId,
          project_id: projectId,
          kind: "sso" as const,
          anon_token_hash: null,
          sso_id: person.ssoId || null,
          display_name: displayName(person),
          email: emailOf(person),
          ...withoutBilling,
          role: ROLE[person.role],
          company: person.deleted ? null : person.company,
          created_at: ctx.now,
          updated_at: ctx.now,
        })),
      )
      .returning(["id", "public_id"])
      .execute();
    const ids = new Map(rows.map((row) => [row.public_id, row.id]));
    for (const { person, publicId } of batch) {
      const id = ids.get(publicId)!;
      result.set(person.sourceId, id);
      ctx.remember("voter", person.sourceId, id);
      ctx.counts.voters.created += 1;
      ctx.tick();
    }
  }
  for (const [sourceId, twin] of sameAs) {
    const id = result.get(twin.sourceId);
    if (id === undefined) continue;
    result.set(sourceId, id);
    ctx.remember("voter", sourceId, id);
    ctx.counts.voters.updated += 1;
    ctx.tick();
  }
  return result;
}

/**
 * The voter standing for comments whose source names no author (a comment needs one): made once
 * per source as `Imported user`, remembered as UNKNOWN_PERSON. Not counted among the voters.
 */
export async function placeholderVoter(ctx: WriteContext): Promise<number | undefined> {
  const m = ctx.mapped.voter.get(UNKNOWN_PERSON);
  if (m) return (await existingIds(ctx.trx, "voters", ctx.projectId, [m.target])).has(m.target) ? m.target : undefined;
  const row = await ctx.trx
    .insertInto("voters")
    .values({
      public_id: generateVoterId(),
      project_id: ctx.projectId,
      kind: "sso",
      anon_token_hash: null,
      sso_id: null,
      display_name: IMPORTED_USER,
      email: null,
      ...withoutBilling,
      created_at: ctx.now,
      updated_at: ctx.now,
    })
    .returning("id")
    .executeTakeFirstOrThrow();
  ctx.remember("voter", UNKNOWN_PERSON, row.id);
  return row.id;
}
