import type { EntityRef } from "../scim/scim-types.js";
import { isTransientFailureCode } from "./sync-error.js";
import type { SyncStateReader } from "./sync-state-types.js";

/**
 * Dead letters of failures that heal by themselves (a platform outage longer than the jobs'
 * attempts, say) are synced again by the next reconciliation of their source, in resync mode:
 * once the platform answers again, the platform ends in the desired state without an admin's
 * `dead-letters retry`, and each letter goes once its entity syncs (or is written again, with the
 * new reason, if it fails again). A reconciliation sees only drift; these entities may show none
 * (a write applied whose answer was lost, an attribute value outside the run's slice) and would
 * keep their letters for ever. Refusals are left for an admin (isTransientFailureCode).
 *
 * Reads the source's letters a page at a time from the newest end down, so that letters removed
 * meanwhile (their entities synced) never shift a page not yet read. Answers how many entities
 * were handed to `requestResync`.
 */
export async function resyncTransientDeadLetters(
  state: Pick<SyncStateReader, "listDeadLetters">,
  source: string,
  requestResync: (refs: EntityRef[]) => Promise<void>,
  pageSize = 500,
): Promise<number> {
  const { total } = await state.listDeadLetters({ source, offset: 0, limit: 0 });
  let requested = 0;
  for (let end = total; end > 0; end -= pageSize) {
    const offset = Math.max(0, end - pageSize);
    const page = await state.listDeadLetters({ source, offset, limit: end - offset });
    const refs = page.items
      .filter((letter) => letter.ref.source === source && isTransientFailureCode(letter.code))
      .map((letter) => letter.ref);
    if (refs.length === 0) continue;
    await requestResync(refs);
    requested += refs.length;
  }
  return requested;
}
