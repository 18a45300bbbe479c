/**
 * Test and demo access to the emulator's data: a snapshot of everything, seeding, and changes
 * made "behind the bridge's back" for drift tests. None of this goes through the request log.
 */
import type { EmbedUserInput, UserAttributeType, UserAttributeValueValue } from "../platform-types.js";
import { embedGroupView } from "./embed-store.js";
import { badRequest, notFound } from "./emulator-error.js";
import type { EmulatorState } from "./emulator-state.js";
import { type StoredGroup, type StoredUser, userFieldsFrom } from "./scim-store.js";
import { userView } from "./scim-views.js";

type Obj = Record<string, unknown>;

export interface SeedData {
  /** SCIM user documents (userName required); an `id` is kept when given. */
  users?: Obj[];
  /** Groups; `members` are platform user ids or userNames. */
  groups?: Array<{ id?: string; displayName: string; externalId?: string; members?: string[] }>;
  attributes?: Array<{ name: string; type: UserAttributeType; displayName?: string }>;
  /** Values by attribute id or name; `userId` may also be a userName. */
  attributeValues?: Array<{
    userId: string;
    attributeId?: number;
    name?: string;
    value: UserAttributeValueValue;
  }>;
  embedGroups?: Array<{ tenant: string; name: string; description?: string; members?: EmbedUserInput[] }>;
}

export interface SeedResult {
  users: string[];
  groups: string[];
  attributes: number[];
  embedGroups: string[];
}

export type DriftAction =
  | { action: "setUserActive"; userId: string; active: boolean }
  | { action: "removeGroupMember"; groupId: string; userId: string }
  | { action: "setAttributeValue"; userId: string; attributeId: number; value: UserAttributeValueValue }
  | { action: "deleteGroup"; groupId: string }
  | { action: "addOrphanUser"; user: Obj }
  | { action: "removeEmbedGroupMember"; tenant: string; groupId: string; externalId: string }
  | { action: "failBulkFor"; userId: string; code: string };

export function snapshot(state: EmulatorState) {
  const { scim, attributes, embed } = state;
  return {
    users: [...scim.users.orderedKeys()].flatMap((id) => {
      const u = scim.users.get(id);
      return u ? [userView(u)] : [];
    }),
    groups: [...scim.groups.values()].map((g) => ({
      id: g.id,
      displayName: g.displayName,
      ...(g.externalId !== undefined ? { externalId: g.externalId } : {}),
      members: [...g.members],
    })),
    attributes: attributes.list(),
    attributeValues: [...attributes.values.keys()].flatMap((userId) => attributes.valuesOf(userId)),
    embedTenants: [...embed.tenants.values()].map((t) => ({
      name: t.name,
      users: [...t.users.values()],
      groups: [...t.groups.values()].map((g) => ({
        ...embedGroupView(g),
        members: g.members.orderedKeys().map((id) => t.users.get(id)?.externalId ?? id),
      })),
    })),
  };
}

export type EmulatorSnapshot = ReturnType<typeof snapshot>;

export function addUser(state: EmulatorState, doc: Obj): string {
  if (typeof doc.userName !== "string") throw badRequest("a seeded user needs a userName");
  const now = state.now();
  const user: StoredUser = {
    ...userFieldsFrom(doc),
    id: typeof doc.id === "string" ? doc.id : state.newId(),
    created: now,
    lastModified: now,
    version: 1,
  };
  state.scim.putUser(user);
  return user.id;
}

export function seed(state: EmulatorState, data: SeedData): SeedResult {
  const result: SeedResult = { users: [], groups: [], attributes: [], embedGroups: [] };
  for (const doc of data.users ?? []) result.users.push(addUser(state, doc));
  for (const g of data.groups ?? []) {
    const now = state.now();
    const members = new Set<string>();
    for (const ref of g.members ?? []) {
      const id = state.scim.users.has(ref) ? ref : state.scim.userIdByUserName(ref);
      if (id === undefined) throw badRequest(`seeded group member ${ref} is not a user`);
      members.add(id);
    }
    const group: StoredGroup = {
      id: g.id ?? state.newId(),
      displayName: g.displayName,
      ...(g.externalId !== undefined ? { externalId: g.externalId } : {}),
      members,
      created: now,
      lastModified: now,
      version: 1,
    };
    state.scim.putGroup(group);
    result.groups.push(group.id);
  }
  for (const a of data.attributes ?? []) result.attributes.push(state.attributes.create(a).id);
  for (const v of data.attributeValues ?? []) {
    const id = v.attributeId ?? state.attributes.list().find((d) => d.name === v.name)?.id;
    if (id === undefined) throw notFound(`no user attribute ${v.name}`);
    const userId = state.scim.users.has(v.userId) ? v.userId : state.scim.userIdByUserName(v.userId);
    if (userId === undefined) throw notFound(`no user ${v.userId}`);
    state.attributes.upsert(userId, id, v.value);
  }
  for (const e of data.embedGroups ?? []) {
    const group = state.embed.createGroup(e.tenant, { name: e.name, description: e.description });
    if (e.members?.length) state.embed.addMembers(e.tenant, group.id, e.members);
    result.embedGroups.push(group.id);
  }
  return result;
}

/** Applies one out-of-band change; returns the new user's id for addOrphanUser. */
export function drift(state: EmulatorState, change: DriftAction): string | undefined {
  switch (change.action) {
    case "setUserActive": {
      const user = state.scim.users.get(change.userId);
      if (!user) throw notFound(`no user ${change.userId}`);
      state.scim.users.set(user.id, { ...user, active: change.active, version: user.version + 1 });
      return undefined;
    }
    case "removeGroupMember": {
      const group = state.scim.groups.get(change.groupId);
      if (!group) throw notFound(`no group ${change.groupId}`);
      state.scim.removeMember(group, change.userId);
      return undefined;
    }
    case "setAttributeValue":
      if (!state.scim.users.has(change.userId)) throw notFound(`no user ${change.userId}`);
      state.attributes.upsert(change.userId, change.attributeId, change.value);
      return undefined;
    case "deleteGroup":
      if (!state.scim.deleteGroup(change.groupId)) throw notFound(`no group ${change.groupId}`);
      return undefined;
    case "addOrphanUser":
      return addUser(state, change.user);
    case "removeEmbedGroupMember":
      state.embed.removeMembers(change.tenant, change.groupId, [change.externalId]);
      return undefined;
    case "failBulkFor":
      state.bulkFailures.set(change.userId, change.code);
      return undefined;
    default:
      throw badRequest(`unknown drift action ${(change as { action?: unknown }).action}`);
  }
}
