/**
 * The directory as the earlier events of a signed delivery will leave it, for validating the later
 * ones before anything is stored: an upsert takes (and a rename or delete frees) a userName,
 * displayName and externalId, and a member must name a user that exists at that point of the
 * delivery. Reads go to the directory; what the delivery changes is kept here, in memory.
 */
import type { DirectoryStore } from "../directory/directory-types.js";
import { caseFold } from "../scim/case-fold.js";
import { maySameEntity } from "./external-id.js";

/** The unique keys of one entity: externalId as given, the name trimmed and case-folded. */
interface Keys {
  externalId?: string;
  name: string;
}

/** A directory id, or a placeholder for an entity the delivery creates. */
type Ref = string;

/** "taken": the name is held by another entity (the event must be refused). */
export type UpsertOutcome = { ref: Ref } | "taken";

/**
 * A name as the directory compares it (caseFold: lower case, then NFC), so that names one event
 * sends composed and another decomposed are one name here too: otherwise both pass validation and
 * the second is refused by the directory half-way through the delivery.
 */
function nameKey(name: string): string {
  return caseFold(name.trim());
}

interface Lookups {
  byExternalId(externalId: string): Promise<string | null>;
  byName(name: string): Promise<string | null>;
  keysOf(id: string): Promise<Keys | null>;
}

/** One kind of entity (users or groups) as the delivery leaves it. */
class KindView {
  private readonly externalIds = new Map<string, Ref | null>();
  private readonly names = new Map<string, Ref | null>();
  /** The keys of every entity the delivery touched; null once it deletes it. */
  private readonly keys = new Map<Ref, Keys | null>();
  private created = 0;

  constructor(private readonly lookups: Lookups) {}

  async byExternalId(externalId: string): Promise<Ref | null> {
    const known = this.externalIds.get(externalId);
    return known !== undefined ? known : this.lookups.byExternalId(externalId);
  }

  async byName(name: string): Promise<Ref | null> {
    const key = nameKey(name);
    const known = this.names.get(key);
    return known !== undefined ? known : this.lookups.byName(key);
  }

  /** True when `id` (a directory id) names an entity that still exists at this point. */
  async exists(id: string): Promise<boolean> {
    const known = this.keys.get(id);
    return known !== undefined ? known !== null : (await this.lookups.keysOf(id)) !== null;
  }

  private async keysOf(ref: Ref): Promise<Keys | null> {
    const known = this.keys.get(ref);
    return known !== undefined ? known : this.lookups.keysOf(ref);
  }

  private async setKeys(ref: Ref, next: Keys | null): Promise<void> {
    const previous = await this.keysOf(ref);
    if (previous?.externalId !== undefined) this.externalIds.set(previous.externalId, null);
    if (previous) this.names.set(previous.name, null);
    this.keys.set(ref, next);
    if (next?.externalId !== undefined) this.externalIds.set(next.externalId, ref);
    if (next) this.names.set(next.name, ref);
  }

  /**
   * An upsert matched by externalId, then by name (as the service applies it). The name may not be
   * held by another entity, nor matched when its holder has another externalId (another person).
   */
  async upsert(externalId: string | undefined, name: string): Promise<UpsertOutcome> {
    const byExternal = externalId !== undefined ? await this.byExternalId(externalId) : null;
    const byName = await this.byName(name);
    let ref: Ref;
    if (byExternal) {
      if (byName && byName !== byExternal) return "taken";
      ref = byExternal;
    } else if (byName) {
      const held = (await this.keysOf(byName))?.externalId;
      if (!maySameEntity(externalId, held)) return "taken";
      ref = byName;
    } else {
      ref = `(created by event ${++this.created})`;
    }
    await this.setKeys(ref, { ...(externalId !== undefined ? { externalId } : {}), name: nameKey(name) });
    return { ref };
  }

  /**
   * A delete matched by externalId, then by name (as the service applies it). Found by name, an
   * entity of another externalId is someone else: the service spares it, so it keeps its name here
   * too (a later upsert may not take the name, a member may still name it).
   */
  async delete(externalId: string | undefined, name: string | undefined): Promise<void> {
    let ref = externalId !== undefined ? await this.byExternalId(externalId) : null;
    if (!ref && name !== undefined) {
      const byName = await this.byName(name);
      if (byName && maySameEntity(externalId, (await this.keysOf(byName))?.externalId)) ref = byName;
    }
    if (ref) await this.setKeys(ref, null);
  }
}

function keysFrom(externalId: unknown, name: string): Keys {
  return {
    ...(typeof externalId === "string" && externalId !== "" ? { externalId } : {}),
    name: nameKey(name),
  };
}

/** Users and groups of one source as a delivery leaves them, event after event. */
export class DeliveryView {
  readonly users: KindView;
  readonly groups: KindView;

  constructor(directory: DirectoryStore, source: string) {
    this.users = new KindView({
      byExternalId: (externalId) => directory.findUserId(source, { externalId }),
      byName: (userName) => directory.findUserId(source, { userName }),
      keysOf: async (id) => {
        const record = await directory.getUser(source, id);
        return record ? keysFrom(record.resource.externalId, record.resource.userName) : null;
      },
    });
    this.groups = new KindView({
      byExternalId: (externalId) => directory.findGroupId(source, { externalId }),
      byName: (displayName) => directory.findGroupId(source, { displayName }),
      keysOf: async (id) => {
        const record = await directory.getGroup(source, id);
        return record ? keysFrom(record.resource.externalId, record.resource.displayName) : null;
      },
    });
  }
}
