/**
 * The platform's SCIM users and groups, in memory, with the indexes the benchmarks need:
 * id maps in creation order, a lower-case userName index, and a user -> groups reverse index.
 */
import { SCHEMA_ENTERPRISE_USER } from "../../scim/scim-types.js";
import { conflict } from "./emulator-error.js";
import { OrderedIndex } from "./ordered-index.js";

export const ENTERPRISE_FIELDS = [
  "department",
  "costCenter",
  "division",
  "organization",
  "employeeNumber",
] as const;

export interface StoredEmail {
  value: string;
  type?: string;
  primary?: boolean;
}

export interface StoredUser {
  id: string;
  userName: string;
  externalId?: string;
  givenName?: string;
  familyName?: string;
  displayName?: string;
  emails: StoredEmail[];
  active: boolean;
  enterprise: Partial<Record<(typeof ENTERPRISE_FIELDS)[number] | "manager", string>>;
  created: string;
  lastModified: string;
  version: number;
}

export interface StoredGroup {
  id: string;
  displayName: string;
  externalId?: string;
  members: Set<string>;
  created: string;
  lastModified: string;
  version: number;
}

type Obj = Record<string, unknown>;

const str = (value: unknown): string | undefined => (typeof value === "string" ? value : undefined);

/** Reads the attributes the platform keeps from a SCIM user document (RFC 7643 §4.1, §4.3). */
export function userFieldsFrom(doc: Obj): Omit<StoredUser, "id" | "created" | "lastModified" | "version"> {
  const name = (doc.name ?? {}) as Obj;
  const ext = (doc[SCHEMA_ENTERPRISE_USER] ?? {}) as Obj;
  const enterprise: StoredUser["enterprise"] = {};
  for (const field of ENTERPRISE_FIELDS) {
    const value = str(ext[field]);
    if (value !== undefined) enterprise[field] = value;
  }
  const manager = str(((ext.manager ?? {}) as Obj).value);
  if (manager !== undefined) enterprise.manager = manager;
  const emails = Array.isArray(doc.emails)
    ? (doc.emails as Obj[])
        .filter((e) => e && typeof e.value === "string")
        .map((e) => ({
          value: e.value as string,
          ...(typeof e.type === "string" ? { type: e.type } : {}),
          ...(typeof e.primary === "boolean" ? { primary: e.primary } : {}),
        }))
    : [];
  return {
    userName: String(doc.userName),
    externalId: str(doc.externalId),
    givenName: str(name.givenName),
    familyName: str(name.familyName),
    displayName: str(doc.displayName),
    emails,
    active: typeof doc.active === "boolean" ? doc.active : true,
    enterprise,
  };
}

export class ScimStore {
  readonly users = new OrderedIndex<StoredUser>();
  readonly groups = new OrderedIndex<StoredGroup>();
  private readonly byUserName = new Map<string, string>();
  private readonly byExternalId = new Map<string, Set<string>>();
  private readonly byGroupName = new Map<string, string>();
  private readonly groupsOfUser = new Map<string, Set<string>>();

  clear(): void {
    this.users.clear();
    this.groups.clear();
    this.byUserName.clear();
    this.byExternalId.clear();
    this.byGroupName.clear();
    this.groupsOfUser.clear();
  }

  userIdByUserName(userName: string): string | undefined {
    return this.byUserName.get(userName.toLowerCase());
  }

  /** Ids of users with exactly this externalId (case-exact, RFC 7643 §3.1). */
  userIdsByExternalId(externalId: string): string[] {
    return [...(this.byExternalId.get(externalId) ?? [])];
  }

  groupIdByDisplayName(displayName: string): string | undefined {
    return this.byGroupName.get(displayName.toLowerCase());
  }

  /** Inserts or replaces a user; userName is unique, case-insensitive (RFC 7643 §4.1.1). */
  putUser(user: StoredUser): void {
    const key = user.userName.toLowerCase();
    const holder = this.byUserName.get(key);
    if (holder !== undefined && holder !== user.id) throw conflict(`userName is already taken`);
    const previous = this.users.get(user.id);
    if (previous && previous.userName.toLowerCase() !== key) {
      this.byUserName.delete(previous.userName.toLowerCase());
    }
    if (previous?.externalId !== undefined) this.byExternalId.get(previous.externalId)?.delete(user.id);
    if (user.externalId !== undefined) {
      const ids = this.byExternalId.get(user.externalId) ?? new Set<string>();
      ids.add(user.id);
      this.byExternalId.set(user.externalId, ids);
    }
    this.byUserName.set(key, user.id);
    this.users.set(user.id, user);
  }

  deleteUser(id: string): boolean {
    const user = this.users.get(id);
    if (!user) return false;
    this.users.delete(id);
    this.byUserName.delete(user.userName.toLowerCase());
    if (user.externalId !== undefined) this.byExternalId.get(user.externalId)?.delete(id);
    for (const groupId of this.groupsOfUser.get(id) ?? []) this.groups.get(groupId)?.members.delete(id);
    this.groupsOfUser.delete(id);
    return true;
  }

  putGroup(group: StoredGroup): void {
    const key = group.displayName.toLowerCase();
    const holder = this.byGroupName.get(key);
    if (holder !== undefined && holder !== group.id) throw conflict(`displayName is already taken`);
    const previous = this.groups.get(group.id);
    if (previous && previous.displayName.toLowerCase() !== key) {
      this.byGroupName.delete(previous.displayName.toLowerCase());
    }
    if (previous && previous.members !== group.members) {
      for (const member of previous.members) this.groupsOfUser.get(member)?.delete(group.id);
    }
    for (const member of group.members) this.linkMember(group.id, member);
    this.byGroupName.set(key, group.id);
    this.groups.set(group.id, group);
  }

  deleteGroup(id: string): boolean {
    const group = this.groups.get(id);
    if (!group) return false;
    for (const member of group.members) this.groupsOfUser.get(member)?.delete(id);
    this.groups.delete(id);
    this.byGroupName.delete(group.displayName.toLowerCase());
    return true;
  }

  addMember(group: StoredGroup, userId: string): void {
    group.members.add(userId);
    this.linkMember(group.id, userId);
  }

  removeMember(group: StoredGroup, userId: string): boolean {
    this.groupsOfUser.get(userId)?.delete(group.id);
    return group.members.delete(userId);
  }

  groupIdsOf(userId: string): string[] {
    return [...(this.groupsOfUser.get(userId) ?? [])];
  }

  private linkMember(groupId: string, userId: string): void {
    let set = this.groupsOfUser.get(userId);
    if (!set) {
      set = new Set();
      this.groupsOfUser.set(userId, set);
    }
    set.add(groupId);
  }
}
