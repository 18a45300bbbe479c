import type { AppliedEmbedGroup, AppliedGroup, AppliedUser } from "../mapping/plan-types.js";
import type { EntityRef } from "../scim/scim-types.js";
import { settleCreate } from "./ownership.js";
import type { SyncContext } from "./sync-context.js";
import type { OwnerScope } from "./sync-keys.js";

/**
 * The sync of an entity the directory no longer holds (purged: a duplicate or late job) drops what
 * is still recorded of it. Mostly nothing, or a status a late run noted after the entity was
 * forgotten; but a run that wrote on after it lost its job (its process frozen past the job's
 * lock) may have left its applied record, a claim on a platform object and a create's hold on a
 * name. Nothing else would ever remove them (invariant 6); a platform object so released is no
 * source's any more, and reconciliation reports it.
 */
export async function forgetAbsent(ctx: Pick<SyncContext, "state">, ref: EntityRef): Promise<void> {
  const applied = await ctx.state.getApplied<AppliedUser & AppliedGroup & AppliedEmbedGroup>(ref);
  if (!applied) {
    // Everything but the claims in one MULTI: the status, and an embed user's member record
    // (embed users have no applied record; a late run may have written theirs).
    await ctx.state.forget(ref);
    return;
  }
  const scope: OwnerScope = ref.kind === "user" ? "user" : applied.tenant !== undefined ? "embed" : "group";
  const key = (id: string) => (scope === "embed" ? `${applied.tenant}/${id}` : id);
  // The create's hold goes before the applied record, the only record of its name: a process killed
  // in between leaves the record, and the re-run releases the hold (a no-op) and drops it.
  const pending = applied.pendingUserName ?? applied.pendingDisplayName ?? applied.pendingName;
  if (pending !== undefined) await settleCreate(ctx, scope, key(pending), ref);
  await ctx.state.forget(
    ref,
    applied.platformId ? { scope, platformKey: key(applied.platformId) } : undefined,
  );
}
