/** Handlers for /api/v1: bulk user actions, user attributes and values, embed tenants. */
import type {
  BulkUserAction,
  BulkUserResult,
  EmbedUserInput,
  UserAttributeType,
  UserAttributeValueValue,
} from "../platform-types.js";
import { orderedSlice, pageSizeFor } from "./answer-variations.js";
import { embedGroupView, type StoredTenant } from "./embed-store.js";
import { notFound, violation } from "./emulator-error.js";
import type { Handler, HandlerContext } from "./emulator-state.js";

type Obj = Record<string, unknown>;
const DEFAULT_FIRST = 100;

/** Opaque cursors: the offset of the next item, base64url-encoded. */
export function encodeCursor(offset: number): string {
  return Buffer.from(`o:${offset}`).toString("base64url");
}

function decodeCursor(cursor: string): number {
  const match = /^o:(\d+)$/.exec(Buffer.from(cursor, "base64url").toString("utf8"));
  if (!match) throw violation("after is not a cursor this server gave out");
  return Number(match[1]);
}

/** One page of a cursor list: `{items, pageInfo: {hasNextPage, endCursor}}`. */
function cursorPage<T>(ctx: HandlerContext, total: number, take: (offset: number, count: number) => T[]) {
  const asked = typeof ctx.query.first === "number" ? ctx.query.first : DEFAULT_FIRST;
  if (asked < 0) throw violation("first must not be negative");
  const first = pageSizeFor(ctx.state.variations, asked);
  const offset = typeof ctx.query.after === "string" ? decodeCursor(ctx.query.after) : 0;
  const items = orderedSlice(ctx.state.variations, total, offset, first, take);
  const end = offset + items.length;
  return {
    status: 200,
    body: {
      items,
      pageInfo: { hasNextPage: end < total, endCursor: items.length > 0 ? encodeCursor(end) : null },
    },
  };
}

function tenantOf(ctx: HandlerContext): string {
  return ctx.params.embedTenantName ?? "";
}

/** The tenant whose list is asked for; null (an empty list) for a missing one when that variation is on. */
function listedTenant(ctx: HandlerContext): StoredTenant | null {
  const name = tenantOf(ctx);
  if (ctx.state.variations.emptyListForMissingTenant && !ctx.state.embed.tenants.has(name)) return null;
  return ctx.state.embed.tenant(name);
}

function emptyPage() {
  return { status: 200, body: { items: [], pageInfo: { hasNextPage: false, endCursor: null } } };
}

export const v1Handlers: Record<string, Handler> = {
  bulkUsers(ctx) {
    const { action, userIds } = ctx.body as { action: BulkUserAction; userIds: string[] };
    const result: BulkUserResult = { succeeded: [], failed: [] };
    for (const userId of userIds) {
      const forced = ctx.state.bulkFailures.get(userId);
      const user = ctx.state.scim.users.get(userId);
      if (forced) {
        result.failed.push({ userId, code: forced, message: `injected ${forced}` });
      } else if (!user) {
        result.failed.push({ userId, code: "NOT_FOUND", message: "no such user" });
      } else if (action === "DELETE") {
        ctx.state.deleteUser(userId);
        result.succeeded.push(userId);
      } else {
        ctx.state.scim.users.set(userId, {
          ...user,
          active: action === "ACTIVATE",
          version: user.version + 1,
          lastModified: ctx.state.now(),
        });
        result.succeeded.push(userId);
      }
    }
    return { status: 200, body: result };
  },

  listUserAttributes(ctx) {
    const type = ctx.query.type as UserAttributeType | undefined;
    return { status: 200, body: { items: ctx.state.attributes.list(type) } };
  },

  createUserAttribute(ctx) {
    const body = ctx.body as { name: string; type: UserAttributeType; displayName?: string };
    return { status: 201, body: ctx.state.attributes.create(body) };
  },

  updateUserAttribute(ctx) {
    return { status: 200, body: ctx.state.attributes.update(Number(ctx.params.id), ctx.body as Obj) };
  },

  getUserAttributeValues(ctx) {
    const userId = ctx.params.userId ?? "";
    if (!ctx.state.scim.users.has(userId)) throw notFound(`no user ${userId}`);
    return { status: 200, body: { items: ctx.state.attributes.valuesOf(userId) } };
  },

  upsertUserAttributeValue(ctx) {
    const body = ctx.body as { userId: string; attributeId: number; value: UserAttributeValueValue };
    if (!ctx.state.scim.users.has(body.userId)) throw notFound(`no user ${body.userId}`);
    return { status: 200, body: ctx.state.attributes.upsert(body.userId, body.attributeId, body.value) };
  },

  listEmbedTenants(ctx) {
    const tenants = ctx.state.embed.tenants;
    return cursorPage(ctx, tenants.size, (offset, count) =>
      tenants.slice(offset, count).map((t) => ({ name: t.name })),
    );
  },

  deleteEmbedTenant(ctx) {
    ctx.state.embed.deleteTenant(tenantOf(ctx));
    return { status: 204 };
  },

  listEmbedUsers(ctx) {
    const tenant = listedTenant(ctx);
    if (!tenant) return emptyPage();
    return cursorPage(ctx, tenant.users.size, (offset, count) => tenant.users.slice(offset, count));
  },

  listEmbedGroups(ctx) {
    const tenant = listedTenant(ctx);
    if (!tenant) return emptyPage();
    return cursorPage(ctx, tenant.groups.size, (offset, count) =>
      tenant.groups.slice(offset, count).map(embedGroupView),
    );
  },

  createEmbedGroup(ctx) {
    const group = ctx.state.embed.createGroup(
      tenantOf(ctx),
      ctx.body as { name: string; description?: string },
    );
    return { status: 201, body: embedGroupView(group) };
  },

  getEmbedGroup(ctx) {
    return { status: 200, body: embedGroupView(ctx.state.embed.group(tenantOf(ctx), ctx.params.id ?? "")) };
  },

  updateEmbedGroup(ctx) {
    const input = ctx.body as { name?: string; description?: string };
    return {
      status: 200,
      body: embedGroupView(ctx.state.embed.updateGroup(tenantOf(ctx), ctx.params.id ?? "", input)),
    };
  },

  deleteEmbedGroup(ctx) {
    ctx.state.embed.deleteGroup(tenantOf(ctx), ctx.params.id ?? "");
    return { status: 204 };
  },

  listEmbedGroupMembers(ctx) {
    const group = ctx.state.embed.group(tenantOf(ctx), ctx.params.id ?? "");
    return cursorPage(ctx, group.members.size, (offset, count) =>
      ctx.state.embed.memberList(tenantOf(ctx), group.id, offset, count),
    );
  },

  addEmbedGroupMembers(ctx) {
    const { users } = ctx.body as { users: EmbedUserInput[] };
    const memberCount = ctx.state.embed.addMembers(tenantOf(ctx), ctx.params.id ?? "", users);
    return { status: 200, body: { memberCount } };
  },

  removeEmbedGroupMembers(ctx) {
    const { externalIds } = ctx.body as { externalIds: string[] };
    ctx.state.embed.removeMembers(tenantOf(ctx), ctx.params.id ?? "", externalIds);
    return { status: 204 };
  },
};
