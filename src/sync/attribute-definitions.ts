import type { PlatformClient, UserAttribute, UserAttributeType } from "../platform/platform-types.js";
import { SyncError, isPlatformFailure } from "./sync-error.js";

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

  constructor(private readonly platform: PlatformClient) {}

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
    if (displayName !== undefined && def.displayName !== displayName) await this.relabel(def, displayName);
    return def.id;
  }

  /** Writes a rule's label to its definition (shared by the syncs that meet it at once). */
  private async relabel(def: UserAttribute, displayName: string): Promise<void> {
    let update = this.relabelling.get(def.id);
    if (!update) {
      update = (async () => {
        const updated = await this.platform.updateUserAttribute(def.id, { displayName });
        // Cached as the platform answers it, under the names it was found by.
        const next = { ...def, ...updated, displayName: updated.displayName ?? displayName };
        for (const cache of [this.byName, this.byFoldedName]) {
          for (const [key, cached] of cache) if (cached.id === def.id) cache.set(key, next);
        }
      })();
      this.relabelling.set(def.id, update);
      void update.then(
        () => this.relabelling.delete(def.id),
        () => this.relabelling.delete(def.id),
      );
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
    if (this.loading && !force) return this.loading;
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
