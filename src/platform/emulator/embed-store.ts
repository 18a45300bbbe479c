/** Embed tenants, their groups and their embed users (identified by externalId), in memory. */
import type { EmbedGroup, EmbedUser, EmbedUserInput } from "../platform-types.js";
import { conflict, notFound } from "./emulator-error.js";
import { OrderedIndex } from "./ordered-index.js";

export interface StoredEmbedGroup {
  id: string;
  name: string;
  description?: string;
  /** embed user ids, in the order they were added */
  members: OrderedIndex<true>;
}

export interface StoredTenant {
  name: string;
  groups: OrderedIndex<StoredEmbedGroup>;
  users: OrderedIndex<EmbedUser>;
  userIdByExternalId: Map<string, string>;
}

export function embedGroupView(group: StoredEmbedGroup): EmbedGroup {
  return {
    id: group.id,
    name: group.name,
    ...(group.description !== undefined ? { description: group.description } : {}),
    memberCount: group.members.size,
  };
}

export class EmbedStore {
  readonly tenants = new OrderedIndex<StoredTenant>();

  constructor(private readonly newId: () => string) {}

  clear(): void {
    this.tenants.clear();
  }

  tenant(name: string): StoredTenant {
    const tenant = this.tenants.get(name);
    if (!tenant) throw notFound(`no embed tenant ${name}`);
    return tenant;
  }

  group(tenantName: string, id: string): StoredEmbedGroup {
    const group = this.tenant(tenantName).groups.get(id);
    if (!group) throw notFound(`no embed group ${id} in ${tenantName}`);
    return group;
  }

  deleteTenant(name: string): void {
    if (!this.tenants.delete(name)) throw notFound(`no embed tenant ${name}`);
  }

  /** Creates the group, and the tenant with it when this is its first group. */
  createGroup(tenantName: string, input: { name: string; description?: string }): StoredEmbedGroup {
    let tenant = this.tenants.get(tenantName);
    if (tenant) this.assertNameFree(tenant, input.name);
    else {
      tenant = {
        name: tenantName,
        groups: new OrderedIndex(),
        users: new OrderedIndex(),
        userIdByExternalId: new Map(),
      };
      this.tenants.set(tenantName, tenant);
    }
    const group: StoredEmbedGroup = {
      id: this.newId(),
      name: input.name,
      ...(input.description !== undefined ? { description: input.description } : {}),
      members: new OrderedIndex(),
    };
    tenant.groups.set(group.id, group);
    return group;
  }

  updateGroup(
    tenantName: string,
    id: string,
    input: { name?: string; description?: string },
  ): StoredEmbedGroup {
    const tenant = this.tenant(tenantName);
    const group = this.group(tenantName, id);
    if (input.name !== undefined && input.name !== group.name) {
      this.assertNameFree(tenant, input.name);
      group.name = input.name;
    }
    if (input.description !== undefined) group.description = input.description;
    return group;
  }

  deleteGroup(tenantName: string, id: string): void {
    this.group(tenantName, id);
    this.tenant(tenantName).groups.delete(id);
  }

  /** Adds members, creating embed users on first sight; adding a present member is not an error. */
  addMembers(tenantName: string, groupId: string, users: EmbedUserInput[]): number {
    const tenant = this.tenant(tenantName);
    const group = this.group(tenantName, groupId);
    for (const input of users) {
      const user = this.ensureUser(tenant, input);
      group.members.set(user.id, true);
    }
    return group.members.size;
  }

  removeMembers(tenantName: string, groupId: string, externalIds: string[]): void {
    const tenant = this.tenant(tenantName);
    const group = this.group(tenantName, groupId);
    for (const externalId of externalIds) {
      const id = tenant.userIdByExternalId.get(externalId);
      if (id !== undefined) group.members.delete(id);
    }
  }

  memberList(tenantName: string, groupId: string, offset: number, count: number): EmbedUser[] {
    const tenant = this.tenant(tenantName);
    const group = this.group(tenantName, groupId);
    return group.members
      .orderedKeys()
      .slice(offset, offset + count)
      .flatMap((id) => {
        const user = tenant.users.get(id);
        return user ? [user] : [];
      });
  }

  ensureUser(tenant: StoredTenant, input: EmbedUserInput): EmbedUser {
    const existingId = tenant.userIdByExternalId.get(input.externalId);
    const existing = existingId !== undefined ? tenant.users.get(existingId) : undefined;
    if (existing) {
      if (input.email !== undefined) existing.email = input.email;
      if (input.displayName !== undefined) existing.displayName = input.displayName;
      return existing;
    }
    const user: EmbedUser = {
      id: this.newId(),
      externalId: input.externalId,
      ...(input.email !== undefined ? { email: input.email } : {}),
      ...(input.displayName !== undefined ? { displayName: input.displayName } : {}),
    };
    tenant.users.set(user.id, user);
    tenant.userIdByExternalId.set(user.externalId, user.id);
    return user;
  }

  private assertNameFree(tenant: StoredTenant, name: string): void {
    for (const g of tenant.groups.values()) {
      if (g.name === name) throw conflict(`embed group ${name} exists in ${tenant.name}`);
    }
  }
}
