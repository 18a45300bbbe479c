/** Handlers for /api/scim/v2/Users and /Groups (RFC 7644 §3.3–3.6), keyed by operation name. */
import { orderedSlice, pageSizeFor } from "./answer-variations.js";
import { badRequest, notFound } from "./emulator-error.js";
import type { EmulatorState, Handler, HandlerContext } from "./emulator-state.js";
import { type PatchOperationInput, patchGroup, patchUser } from "./scim-patch.js";
import { type StoredGroup, type StoredUser, userFieldsFrom } from "./scim-store.js";
import {
  filterGroups,
  filterUsers,
  GROUP_FILTER_ATTRIBUTES,
  groupView,
  listResponse,
  parseEqFilter,
  USER_FILTER_ATTRIBUTES,
  userView,
} from "./scim-views.js";

type Obj = Record<string, unknown>;
const DEFAULT_COUNT = 100;

function page(ctx: HandlerContext): { startIndex: number; count: number } {
  const startIndex = typeof ctx.query.startIndex === "number" ? ctx.query.startIndex : 1;
  const asked = typeof ctx.query.count === "number" ? ctx.query.count : DEFAULT_COUNT;
  // RFC 7644 §3.4.2.4: the service provider may answer fewer resources than count asks.
  return { startIndex, count: pageSizeFor(ctx.state.variations, asked) };
}

function userOr404(state: EmulatorState, id: string): StoredUser {
  const user = state.scim.users.get(id);
  if (!user) throw notFound(`no user ${id}`);
  return user;
}

function groupOr404(state: EmulatorState, id: string): StoredGroup {
  const group = state.scim.groups.get(id);
  if (!group) throw notFound(`no group ${id}`);
  return group;
}

function membersFrom(state: EmulatorState, doc: Obj): Set<string> {
  const members = Array.isArray(doc.members) ? (doc.members as Obj[]) : [];
  const ids = new Set<string>();
  for (const m of members) {
    const id = String(m.value);
    if (!state.scim.users.has(id)) throw badRequest(`member ${id} is not a platform user`, "invalidValue");
    ids.add(id);
  }
  return ids;
}

function bumped<T extends { version: number; lastModified: string }>(state: EmulatorState, item: T): T {
  return { ...item, version: item.version + 1, lastModified: state.now() };
}

export const scimHandlers: Record<string, Handler> = {
  listUsers(ctx) {
    const { startIndex, count } = page(ctx);
    const store = ctx.state.scim;
    if (typeof ctx.query.filter === "string") {
      const matches = filterUsers(store, parseEqFilter(ctx.query.filter, USER_FILTER_ATTRIBUTES));
      const slice = matches.slice(startIndex - 1, startIndex - 1 + count).map(userView);
      return { status: 200, body: listResponse(matches.length, startIndex, slice) };
    }
    const slice = orderedSlice(ctx.state.variations, store.users.size, startIndex - 1, count, (o, c) =>
      store.users.slice(o, c),
    ).map(userView);
    return { status: 200, body: listResponse(store.users.size, startIndex, slice) };
  },

  createUser(ctx) {
    const now = ctx.state.now();
    const user: StoredUser = {
      ...userFieldsFrom(ctx.body as Obj),
      id: ctx.state.newId(),
      created: now,
      lastModified: now,
      version: 1,
    };
    ctx.state.scim.putUser(user);
    return { status: 201, body: userView(user), headers: { Location: `/api/scim/v2/Users/${user.id}` } };
  },

  getUser(ctx) {
    return { status: 200, body: userView(userOr404(ctx.state, ctx.params.id ?? "")) };
  },

  replaceUser(ctx) {
    const existing = userOr404(ctx.state, ctx.params.id ?? "");
    const user: StoredUser = { ...bumped(ctx.state, existing), ...userFieldsFrom(ctx.body as Obj) };
    ctx.state.scim.putUser(user);
    return { status: 200, body: userView(user) };
  },

  patchUser(ctx) {
    const existing = userOr404(ctx.state, ctx.params.id ?? "");
    const ops = (ctx.body as { Operations: PatchOperationInput[] }).Operations;
    const user = bumped(ctx.state, patchUser(existing, ops));
    ctx.state.scim.putUser(user);
    if (ctx.state.variations.otherPatchAnswers) return { status: 204 };
    return { status: 200, body: userView(user) };
  },

  deleteUser(ctx) {
    if (!ctx.state.deleteUser(ctx.params.id ?? "")) throw notFound(`no user ${ctx.params.id}`);
    return { status: 204 };
  },

  listGroups(ctx) {
    const { startIndex, count } = page(ctx);
    const store = ctx.state.scim;
    const excluded = typeof ctx.query.excludedAttributes === "string" ? ctx.query.excludedAttributes : "";
    const withMembers = !excluded
      .split(",")
      .map((a) => a.trim().toLowerCase())
      .includes("members");
    const view = (g: StoredGroup) => groupView(g, store, withMembers);
    if (typeof ctx.query.filter === "string") {
      const matches = filterGroups(store, parseEqFilter(ctx.query.filter, GROUP_FILTER_ATTRIBUTES));
      const slice = matches.slice(startIndex - 1, startIndex - 1 + count).map(view);
      return { status: 200, body: listResponse(matches.length, startIndex, slice) };
    }
    const slice = orderedSlice(ctx.state.variations, store.groups.size, startIndex - 1, count, (o, c) =>
      store.groups.slice(o, c),
    ).map(view);
    return { status: 200, body: listResponse(store.groups.size, startIndex, slice) };
  },

  createGroup(ctx) {
    const doc = ctx.body as Obj;
    const now = ctx.state.now();
    const group: StoredGroup = {
      id: ctx.state.newId(),
      displayName: String(doc.displayName),
      ...(typeof doc.externalId === "string" ? { externalId: doc.externalId } : {}),
      members: membersFrom(ctx.state, doc),
      created: now,
      lastModified: now,
      version: 1,
    };
    ctx.state.scim.putGroup(group);
    return {
      status: 201,
      body: groupView(group, ctx.state.scim),
      headers: { Location: `/api/scim/v2/Groups/${group.id}` },
    };
  },

  getGroup(ctx) {
    return { status: 200, body: groupView(groupOr404(ctx.state, ctx.params.id ?? ""), ctx.state.scim) };
  },

  replaceGroup(ctx) {
    const existing = groupOr404(ctx.state, ctx.params.id ?? "");
    const doc = ctx.body as Obj;
    const group: StoredGroup = {
      ...bumped(ctx.state, existing),
      displayName: String(doc.displayName),
      externalId: typeof doc.externalId === "string" ? doc.externalId : undefined,
      members: membersFrom(ctx.state, doc),
    };
    ctx.state.scim.putGroup(group);
    return { status: 200, body: groupView(group, ctx.state.scim) };
  },

  patchGroup(ctx) {
    const existing = groupOr404(ctx.state, ctx.params.id ?? "");
    const ops = (ctx.body as { Operations: PatchOperationInput[] }).Operations;
    const patched = patchGroup(existing, ops, (id) => ctx.state.scim.users.has(id), {
      noTargetOnMissingMember: ctx.state.variations.noTargetOnMissingMember === true,
    });
    const group = { ...bumped(ctx.state, existing), ...patched };
    ctx.state.scim.putGroup(group);
    if (ctx.state.variations.otherPatchAnswers)
      return { status: 200, body: groupView(group, ctx.state.scim) };
    return { status: 204 };
  },

  deleteGroup(ctx) {
    if (!ctx.state.scim.deleteGroup(ctx.params.id ?? "")) throw notFound(`no group ${ctx.params.id}`);
    return { status: 204 };
  },
};
