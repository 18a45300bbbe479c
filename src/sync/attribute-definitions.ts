import type { PlatformClient, UserAttribute, UserAttributeType } from "../platform/platform-types.js";
import { SyncError, isPlatformFailure } from "./sync-error.js";

/**
 * The platform's user attribute definitions, cached per process. A missing definition is
 * created (a lost create answer is found again by name); a definition of another type is a
 * permanent, visible error (code attribute_type_clash).
 */
export class AttributeDefinitions {
  private readonly byName = new Map<string, UserAttribute>();
  private loading?: Promise<void>;

  constructor(private readonly platform: PlatformClient) {}

  async ensure(name: string, type: UserAttributeType, displayName?: string): Promise<number> {
    let def = this.byName.get(name);
    if (!def) {
      await this.reload();
      def = this.byName.get(name);
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
        def = this.byName.get(name);
        if (!def)
          throw new SyncError(`attribute ${name} exists but is not listed`, {
            code: "platform_inconsistent",
            permanent: false,
          });
      }
      this.byName.set(name, def);
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
    return def.id;
  }

  /** Forget the cache (e.g. after a 404 on a value: the definition was deleted behind us). */
  invalidate(name?: string): void {
    if (name) this.byName.delete(name);
    else this.byName.clear();
  }

  private async reload(force = false): Promise<void> {
    if (this.loading && !force) return this.loading;
    const loading = (async () => {
      const all = await this.platform.listUserAttributes();
      for (const def of all) this.byName.set(def.name, def);
    })();
    this.loading = loading;
    try {
      await loading;
    } finally {
      if (this.loading === loading) this.loading = undefined;
    }
  }
}
