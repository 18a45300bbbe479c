import { WritesStopped } from "../platform/client/unanswered-writes.js";
import { PlatformError } from "../platform/platform-error.js";
import type { PlatformClient, UserAttribute, UserAttributeType } from "../platform/platform-types.js";
import { SyncError, askedForPause, classifyFailure, isPlatformFailure } from "./sync-error.js";

/** How long a label whose PUT was asked to pause is not asked again (its values are written meanwhile). */
export const RELABEL_REST_MS = 10 * 60_000;

/**
 * The platform's user attribute definitions, cached per process. A missing definition is
 * created (a lost create answer is found again by name); a definition of another type is a
 * permanent, visible error (code attribute_type_clash). The platform's names are unique without
 * regard to case (a create of "Department" beside "department" is a 409), so a definition whose
 * name differs from the rule's only in case is the rule's definition. A rule's `displayName`
 * that differs from the definition's is written to it (PUT) the next time a value of it is
 * written: a label changed in the configuration reaches the platform.
 */
export class AttributeDefinitions {
  private readonly byName = new Map<string, UserAttribute>();
  /** By case-folded name: the platform's own uniqueness. */
  private readonly byFoldedName = new Map<string, UserAttribute>();
  private loading?: Promise<void>;
  /** Label updates under way, by definition id: syncs that meet the same change share one PUT. */
  private readonly relabelling = new Map<number, Promise<void>>();
  /** The label last asked of each definition: asked once a process, whatever the platform made of it. */
  private readonly asked = new Map<number, string>();
  /** Definitions whose label PUT was asked to pause: not asked again before this time (epoch ms). */
  private readonly restingUntil = new Map<number, number>();

  /**
   * `onRelabelFailed`: told when a label could not be written (the value is written all the same:
   * a label is no reason to hold back a user's data).
   */
  constructor(
    private readonly platform: PlatformClient,
    private readonly onRelabelFailed: (name: string, err: unknown) => void = () => {},
    private readonly now: () => number = Date.now,
  ) {}

  async ensure(name: string, type: UserAttributeType, displayName?: string): Promise<number> {
    let def = this.find(name);
    if (!def || def.type !== type) {
      // A cached definition of another type may be stale (replaced on the platform since): a
      // clash is declared only on what the platform lists now. Syncs that meet it at once share
      // one listing (a misconfigured rule meets every user of a source).
      await this.reload();
      def = this.find(name);
    }
    if (!def) {
      try {
        def = await this.platform.createUserAttribute({
          name,
          type,
          ...(displayName ? { displayName } : {}),
        });
      } catch (err) {
        if (!isPlatformFailure(err, "conflict")) throw err;
        await this.reload(true);
        def = this.find(name);
        if (!def)
          throw new SyncError(`attribute ${name} exists but is not listed`, {
            code: "platform_inconsistent",
            permanent: false,
          });
      }
      this.byName.set(name, def);
      this.byFoldedName.set(def.name.toLowerCase(), def);
    }
    if (def.type !== type) {
      throw new SyncError(
        `attribute ${name} exists on the platform with type ${def.type}, the rule says ${type}`,
        {
          code: "attribute_type_clash",
          permanent: true,
          operation: "createUserAttribute",
        },
      );
    }
    if (
      displayName !== undefined &&
      def.displayName !== displayName &&
      this.asked.get(def.id) !== displayName &&
      !((this.restingUntil.get(def.id) ?? 0) > this.now())
    ) {
      await this.relabel(def, displayName);
    }
    return def.id;
  }

  /**
   * Writes a rule's label to its definition (shared by the syncs that meet it at once). Best
   * effort: a failure is told (onRelabelFailed), never the value's; and a label written or refused
   * for good is asked once a process, so that a platform that stores it otherwise (trimmed,
   * shortened) or refuses it is not asked again at every value.
   */
  private async relabel(def: UserAttribute, displayName: string): Promise<void> {
    let update = this.relabelling.get(def.id);
    if (!update) {
      update = (async () => {
        try {
          const updated = await this.platform.updateUserAttribute(def.id, { displayName });
          // Cached as the platform answers it, under the names it was found by.
          const next = { ...def, ...updated, displayName: updated.displayName ?? displayName };
          for (const cache of [this.byName, this.byFoldedName]) {
            for (const [key, cached] of cache) if (cached.id === def.id) cache.set(key, next);
          }
          this.asked.set(def.id, displayName);
        } catch (err) {
          // The sync that sent it may write no more (its job taken over), or a long platform pause
          // held it back unsent (the value's write meets the same pause and the job is put back):
          // neither is the label's failure, and a later value asks again.
          if (err instanceof WritesStopped || (err instanceof PlatformError && err.unsent)) return;
          // Refused for good: not asked again in this process. A transient failure: at a later value;
          // after a pause asked of it (its own 429, or 503 with Retry-After, paused every call), not for
          // RELABEL_REST_MS: asked again at the pause's end, a label that keeps meeting a 429 (a
          // quota on definition changes) would put the user's value, the sync's next call, back
          // each time until the entity is dead-lettered rate limited. A 429 without Retry-After
          // (the client's retries spent on it) rests as long: asked at every value, each would
          // spend those retries on the same quota.
          if (classifyFailure(err).permanent) this.asked.set(def.id, displayName);
          else if (
            err instanceof PlatformError &&
            (err.retryAfterMs !== undefined || err.failure === "rate_limited")
          )
            this.restingUntil.set(def.id, this.now() + RELABEL_REST_MS);
          this.onRelabelFailed(def.name, err);
        } finally {
          this.relabelling.delete(def.id);
        }
      })();
      this.relabelling.set(def.id, update);
    }
    await update;
  }

  /** Forget the cache (e.g. after a 404 on a value: the definition was deleted behind us). */
  invalidate(name?: string): void {
    if (name) {
      this.byName.delete(name);
      const folded = this.byFoldedName.get(name.toLowerCase());
      this.byFoldedName.delete(name.toLowerCase());
      if (folded) this.byName.delete(folded.name);
    } else {
      this.byName.clear();
      this.byFoldedName.clear();
    }
  }

  private find(name: string): UserAttribute | undefined {
    return this.byName.get(name) ?? this.byFoldedName.get(name.toLowerCase());
  }

  private async reload(force = false): Promise<void> {
    if (this.loading && !force) return joined(this.loading);
    const loading = (async () => {
      const all = await this.platform.listUserAttributes();
      // What the platform lists now replaces the cache: a definition deleted there is gone here too.
      this.invalidate();
      for (const def of all) {
        this.byName.set(def.name, def);
        this.byFoldedName.set(def.name.toLowerCase(), def);
      }
    })();
    this.loading = loading;
    try {
      await loading;
    } finally {
      if (this.loading === loading) this.loading = undefined;
    }
  }
}

/**
 * A sync that joined another's listing of the definitions sent no call of its own: a pause the
 * platform answered that listing with holds it back (PlatformError.heldBack), as a pause another
 * call met does, so that its put-back does not count towards the entity's rate-limit loops (only
 * the sync whose call the platform answered counts it). Other failures are the joiner's as well.
 */
async function joined(loading: Promise<void>): Promise<void> {
  try {
    await loading;
  } catch (err) {
    if (!(err instanceof PlatformError) || askedForPause(err) === undefined || err.heldBack) throw err;
    throw new PlatformError(err.message, {
      operation: err.operation,
      failure: err.failure,
      transient: err.transient,
      httpStatus: err.httpStatus,
      retryAfterMs: err.retryAfterMs,
      heldBack: true,
      cause: err,
    });
  }
}
