import type { EntityRef } from "../scim/scim-types.js";
import { isTransientFailureCode } from "./sync-error.js";
import type { StoredDeadLetter, SyncStateReader } from "./sync-state-types.js";

/** What resyncTransientDeadLetters reads and marks (RedisSyncStateStore). */
export interface DeadLetterRetryState extends Pick<SyncStateReader, "deadLetterPages"> {
  /** The entities' current generations in the directory (0 for one it does not hold), in order. */
  entityGenerations(refs: readonly EntityRef[]): Promise<number[]>;
  /**
   * Notes `autoRetriedAt` (and the entity's generation at the hand-over) on a letter unless it
   * changed since it was read: true if it did.
   */
  markDeadLetterAutoRetried(read: StoredDeadLetter, at: string, generation: number): Promise<boolean>;
}

/**
 * Dead letters of failures that heal by themselves (a platform outage longer than the jobs'
 * attempts, say) are synced again by the next reconciliation of their source, in resync mode:
 * once the platform answers again, the platform ends in the desired state without an admin's
 * `dead-letters retry`, and each letter goes once its entity syncs. A reconciliation sees only
 * drift; these entities may show none (a write applied whose answer was lost, an attribute value
 * outside the run's slice) and would keep their letters for ever. Refusals are left for an admin
 * (isTransientFailureCode). An entity that does show drift is synced again by the run's repairs
 * whatever its letter (apply-repairs.ts): this hand-over does not enqueue it a second time.
 *
 * Once only: a letter handed over is marked (`autoRetriedAt`), with the entity's generation read
 * before the hand-over, and a letter written again for that same generation (the sync handed over
 * failed again) keeps the mark (RedisSyncStateStore.addDeadLetter): it is left for an admin, so
 * that a failure that does not heal is not dead-lettered again (dead_letters_total, an `error`
 * line) at every scheduled run. A letter of a newer change of the entity (a rename days later, in
 * another outage) does not keep it: it is handed over once in turn. The mark is written after the
 * hand-over, only on the letter as read: a letter that changed meanwhile is not marked (at worst
 * handed over once more later). The generation is read before the hand-over so that an error goes
 * the same way: an entity changed between that reading and the sync's own reading leaves a letter
 * that drops the mark (handed over once more), never a newer change's letter that keeps it.
 *
 * Reads the source's letters a page at a time (deadLetterPages: each letter there at the start
 * once, whatever is removed or written again meanwhile). Entities the run's repairs already
 * requested (`alreadyRequested`: they showed drift) are marked, not requested a second time (a
 * second request while the first sync runs would stack one more sync behind it). Answers how many
 * letters were handed over.
 */
export async function resyncTransientDeadLetters(
  state: DeadLetterRetryState,
  source: string,
  requestResync: (refs: EntityRef[]) => Promise<void>,
  options: { pageSize?: number; alreadyRequested?: (refs: EntityRef[]) => Promise<boolean[]> } = {},
): Promise<number> {
  const pageSize = options.pageSize ?? 500;
  let requested = 0;
  for await (const page of state.deadLetterPages({ source, pageSize })) {
    const due = page.filter(
      ({ letter }) =>
        letter.ref.source === source &&
        isTransientFailureCode(letter.code) &&
        letter.autoRetriedAt === undefined,
    );
    if (due.length === 0) continue;
    const refs = due.map(({ letter }) => letter.ref);
    // Read before the hand-over: the syncs handed over plan from this generation or a later one.
    const generations = await state.entityGenerations(refs);
    const requestedBefore = (await options.alreadyRequested?.(refs)) ?? [];
    const toRequest = refs.filter((_ref, i) => requestedBefore[i] !== true);
    if (toRequest.length > 0) await requestResync(toRequest);
    requested += due.length;
    const at = new Date().toISOString();
    await Promise.all(due.map((read, i) => state.markDeadLetterAutoRetried(read, at, generations[i] ?? 0)));
  }
  return requested;
}
