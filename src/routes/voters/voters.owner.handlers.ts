/**
 * Handlers of the owner's voter routes: parse -> repository (one transaction per write) ->
 * toAdminVoter -> envelope. Caches of every instance are cleared after a successful write by
 * src/middleware/owner-change.ts, so a ban or an erasure holds from the next request anywhere.
 * Events (owner-api-v3.md): voter.banned / unbanned / billing_changed from the AdminVoterObject
 * before and after a PATCH (src/events/voter-events.ts), voter.deleted with the voter as it was, personal fields null (Rules 3).
 * An erasure also deletes the voter's idempotency records on the shared store (Rules 3: nothing
 * stored names the voter), inside its transaction.
 */
import { scrubbedObject } from "../../events/erasure.ts";
import { recordEvents } from "../../events/outbox.ts";
import { voterChangeEvents } from "../../events/voter-events.ts";
import { withProjectWriteLock } from "../../lib/data/project-write-lock.ts";
import { page, success } from "../../lib/http/envelope.ts";
import { ApiError } from "../../lib/http/errors.ts";
import { pageMeta } from "../../lib/http/pagination.ts";
import type { AppRouteHandler } from "../../lib/http/router.ts";
import { forgetVoterIdempotency } from "../../middleware/idempotency.ts";
import { toAdminVoter } from "./voters.owner.mapper.ts";
import { eraseVoter, findAdminVoter, listAdminVoters, lockAdminVoter, updateVoter } from "./voters.owner.repository.ts";
import type * as routes from "./voters.owner.routes.ts";

const voterNotFound = () => new ApiError("not_found", "no voter with this id in the project");

export const adminListVoters: AppRouteHandler<typeof routes.adminListVoters> = async (c) => {
  const { q, banned, tier_id, churned, page: pageNumber, per_page } = c.req.valid("query");
  const project = c.get("project");
  const request = { page: pageNumber, per_page };
  const { rows, total } = await listAdminVoters(c.get("deps").db, project.id, { q, banned, tierId: tier_id, churned }, request);
  return c.json(
    page(
      rows.map((row) => toAdminVoter(row, project.currency_symbol)),
      pageMeta(request, total),
    ),
    200,
  );
};

export const adminGetVoter: AppRouteHandler<typeof routes.adminGetVoter> = async (c) => {
  const project = c.get("project");
  const row = await findAdminVoter(c.get("deps").db, project.id, c.req.valid("param").voter_id);
  if (!row) throw voterNotFound();
  return c.json(success(toAdminVoter(row, project.currency_symbol)), 200);
};

export const adminUpdateVoter: AppRouteHandler<typeof routes.adminUpdateVoter> = async (c) => {
  const project = c.get("project");
  const { db, now } = c.get("deps");
  const patch = c.req.valid("json");
  const voterId = c.req.valid("param").voter_id;
  const result = await withProjectWriteLock(db, project.id, async (trx) => {
    // Locked, then read: `before` is the state this PATCH replaces.
    const before = await lockAdminVoter(trx, project.id, voterId);
    const outcome = await updateVoter(trx, project.id, voterId, patch, now());
    if (outcome.kind === "updated" && before) {
      const events = voterChangeEvents(
        toAdminVoter(before, project.currency_symbol),
        toAdminVoter(outcome.row, project.currency_symbol),
        before.id,
      );
      await recordEvents(trx, project.id, events);
    }
    return outcome;
  });
  if (result.kind === "not_found") throw voterNotFound();
  if (result.kind === "bad_tier")
    throw new ApiError("validation_failed", "tier_id: no tier with this id in the project", { field: "tier_id" });
  return c.json(success(toAdminVoter(result.row, project.currency_symbol)), 200);
};

export const adminDeleteVoter: AppRouteHandler<typeof routes.adminDeleteVoter> = async (c) => {
  const project = c.get("project");
  const { voter_id } = c.req.valid("param");
  const { db, idempotencyStore } = c.get("deps");
  const erased = await withProjectWriteLock(db, project.id, async (trx) => {
    const before = await lockAdminVoter(trx, project.id, voter_id);
    const voter = before ? await eraseVoter(trx, project.id, voter_id) : null;
    if (!before || !voter) return false;
    // As it was, with the personal fields already null (Rules 3): no receiver learns them from it.
    await recordEvents(trx, project.id, [
      { type: "voter.deleted", object: scrubbedObject(toAdminVoter(before, project.currency_symbol)), subjectVoterId: before.id },
    ]);
    // Last, before the commit: when the shared store does not answer, nothing is erased (the
    // error answers 500, safe to retry). Should the commit then fail, the voter stays with its
    // records gone and its running requests' answers unrecorded: a replay runs them again.
    await forgetVoterIdempotency(idempotencyStore, project.id, { publicId: voter_id, anonTokenHash: voter.anonTokenHash });
    return true;
  });
  if (!erased) throw voterNotFound();
  return c.json(success({ deleted: true as const, voter_id }), 200);
};
