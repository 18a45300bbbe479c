/**
 * The only code that talks to the platform: every operation of platform-api.yaml as a typed
 * method, over HTTPS with a bearer token, through the shared request budget and retry policy.
 */
import { pino } from "pino";
import type { ZodType } from "zod";
import type { JsonObject, PatchOperation } from "../../scim/scim-types.js";
import { PlatformError } from "../platform-error.js";
import type {
  BulkUserAction,
  BulkUserResult,
  EmbedGroup,
  EmbedTenant,
  EmbedUser,
  EmbedUserInput,
  PlatformClient,
  PlatformScimGroup,
  PlatformScimUser,
  UserAttribute,
  UserAttributeType,
  UserAttributeValue,
  UserAttributeValueValue,
} from "../platform-types.js";
import { HttpTransport, TransportError } from "./http-transport.js";
import { chunk, cursorPages, MAX_PAGE_SIZE, type PagesOptions, scimPages } from "./paging.js";
import { createPlatformMetrics } from "./platform-metrics.js";
import { platformPaths as paths, scimEqFilter } from "./platform-paths.js";
import { PlatformRequester } from "./platform-requester.js";
import * as s from "./platform-schemas.js";
import { checkedBaseUrl, type HttpPlatformClientOptions } from "./http-platform-client-options.js";

const PATCH_OP_SCHEMA = "urn:ietf:params:scim:api:messages:2.0:PatchOp";
/** Page size of a lookup by displayName: the filtered list holds the name and its case variants. */
const FIND_PAGE_SIZE = 10;
/** The most resources such a lookup reads before it stops (a platform that ignored the filter). */
const FIND_SCAN_LIMIT = 100;

export type { HttpPlatformClientOptions };

export class HttpPlatformClient implements PlatformClient {
  readonly #requester: PlatformRequester;
  readonly #transport: HttpTransport;

  constructor(options: HttpPlatformClientOptions) {
    const baseUrl = checkedBaseUrl(options);
    if (options.token === "") throw new Error("platform token is empty");
    const retryAfterCapMs = options.retryAfterCapMs ?? 300_000;
    if (!Number.isFinite(retryAfterCapMs) || retryAfterCapMs <= 0) {
      throw new Error(`retryAfterCapMs must be a positive number of ms (got ${retryAfterCapMs})`);
    }
    this.#transport = new HttpTransport({
      baseUrl,
      ca: options.ca,
      rejectUnauthorized: options.rejectUnauthorized,
      maxSockets: options.maxSockets,
      maxBodyBytes: options.maxAnswerBytes,
    });
    this.#requester = new PlatformRequester({
      transport: this.#transport,
      token: options.token,
      timeoutMs: options.timeoutMs,
      maxRetries: options.maxRetries,
      backoff: options.backoff ?? { baseMs: 200, capMs: 30_000 },
      maxRetryAfterMs: options.maxRetryAfterMs ?? 60_000,
      retryAfterCapMs,
      budget: options.budget,
      metrics: createPlatformMetrics(options.registry),
      logger: (options.logger ?? pino({ level: "silent" })).child({ module: "platform-client" }),
      random: options.random ?? Math.random,
      sleep: options.sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms))),
      now: Date.now,
    });
  }

  /** Closes the keep-alive sockets; safe to call twice. */
  close(): void {
    this.#transport.close();
  }

  // SCIM users

  listUsers(options: { filter?: string; pageSize?: number } = {}): AsyncIterable<PlatformScimUser> {
    return scimPages(
      (startIndex, count) =>
        this.#get("listUsers", paths.users(), s.scimUserListSchema, {
          filter: options.filter,
          startIndex,
          count,
        }),
      options.pageSize,
      { smallerPageOn: isAnswerTooLarge, ...this.#walk("listUsers") },
    ) as AsyncIterable<PlatformScimUser>;
  }

  async findUserByUserName(userName: string): Promise<PlatformScimUser | null> {
    const filter = scimEqFilter("userName", userName);
    const page = await this.#get("findUserByUserName", paths.users(), s.scimUserListSchema, {
      filter,
      startIndex: 1,
      count: 2,
    });
    // The platform compares userName case-insensitively; prefer an exact match if it ever answers several.
    const found = page.Resources ?? [];
    return (found.find((u) => u.userName === userName) ?? found[0] ?? null) as PlatformScimUser | null;
  }

  async getUser(id: string): Promise<PlatformScimUser | null> {
    return (await this.#call("getUser", "GET", paths.user(id), {
      schema: s.scimUserSchema,
      notFoundIsNull: true,
    })) as PlatformScimUser | null;
  }

  async createUser(user: JsonObject): Promise<PlatformScimUser> {
    return (await this.#send(
      "createUser",
      "POST",
      paths.users(),
      user,
      s.scimUserSchema,
    )) as PlatformScimUser;
  }

  async replaceUser(id: string, user: JsonObject): Promise<PlatformScimUser> {
    return (await this.#send(
      "replaceUser",
      "PUT",
      paths.user(id),
      user,
      s.scimUserSchema,
    )) as PlatformScimUser;
  }

  async patchUser(id: string, operations: PatchOperation[]): Promise<void> {
    await this.#send("patchUser", "PATCH", paths.user(id), patchBody(operations));
  }

  async deleteUser(id: string): Promise<boolean> {
    return (await this.#call("deleteUser", "DELETE", paths.user(id), { notFoundIsNull: true })) !== null;
  }

  // SCIM groups

  listGroups(
    options: { filter?: string; excludeMembers?: boolean; pageSize?: number } = {},
  ): AsyncIterable<PlatformScimGroup> {
    const excludedAttributes = options.excludeMembers ? "members" : undefined;
    return scimPages(
      (startIndex, count) =>
        this.#get("listGroups", paths.groups(), s.scimGroupListSchema, {
          filter: options.filter,
          excludedAttributes,
          startIndex,
          count,
        }),
      options.pageSize,
      { smallerPageOn: isAnswerTooLarge, ...this.#walk("listGroups") },
    ) as AsyncIterable<PlatformScimGroup>;
  }

  /**
   * The group of exactly this displayName, else one whose name differs only in case (`eq` compares
   * without case: RFC 7643 Group.displayName is not caseExact), else null. The filtered list is
   * walked until the exact name: a platform may keep "Eng" and "eng" apart and answer fewer
   * resources a page than asked (RFC 7644 §3.4.2.4), so the first page need not hold it.
   */
  async findGroupByDisplayName(displayName: string): Promise<PlatformScimGroup | null> {
    const matches = scimPages(
      (startIndex, count) =>
        this.#get("findGroupByDisplayName", paths.groups(), s.scimGroupListSchema, {
          filter: scimEqFilter("displayName", displayName),
          excludedAttributes: "members",
          startIndex,
          count,
        }),
      FIND_PAGE_SIZE,
      { smallerPageOn: isAnswerTooLarge, ...this.#walk("findGroupByDisplayName") },
    ) as AsyncIterable<PlatformScimGroup>;
    const folded = displayName.toLowerCase();
    let variant: PlatformScimGroup | null = null;
    let seen = 0;
    for await (const group of matches) {
      if (group.displayName === displayName) return group;
      // Another name altogether (a platform or proxy that ignored the filter) is never the group.
      if (typeof group.displayName === "string" && group.displayName.toLowerCase() === folded)
        variant ??= group;
      // The filtered list holds the name's case variants only: past that, the filter was ignored.
      seen += 1;
      if (seen >= FIND_SCAN_LIMIT) break;
    }
    return variant;
  }

  async getGroup(id: string): Promise<PlatformScimGroup | null> {
    return (await this.#call("getGroup", "GET", paths.group(id), {
      schema: s.scimGroupSchema,
      notFoundIsNull: true,
    })) as PlatformScimGroup | null;
  }

  async createGroup(group: JsonObject): Promise<PlatformScimGroup> {
    return (await this.#send(
      "createGroup",
      "POST",
      paths.groups(),
      group,
      s.scimGroupSchema,
    )) as PlatformScimGroup;
  }

  /** The contract's answer is `200 replaced` with no content: any body is not read. */
  async replaceGroup(id: string, group: JsonObject): Promise<void> {
    await this.#send("replaceGroup", "PUT", paths.group(id), group);
  }

  async patchGroup(id: string, operations: PatchOperation[]): Promise<void> {
    await this.#send("patchGroup", "PATCH", paths.group(id), patchBody(operations));
  }

  async deleteGroup(id: string): Promise<boolean> {
    return (await this.#call("deleteGroup", "DELETE", paths.group(id), { notFoundIsNull: true })) !== null;
  }

  // Bulk user actions

  async bulkUsers(action: BulkUserAction, userIds: string[]): Promise<BulkUserResult> {
    if (userIds.length === 0) return { succeeded: [], failed: [] };
    if (userIds.length > MAX_PAGE_SIZE) {
      throw new PlatformError(
        `bulkUsers: ${userIds.length} ids given, the platform takes at most 100 a call`,
        {
          operation: "bulkUsers",
          failure: "bad_request",
          transient: false,
        },
      );
    }
    return this.#send("bulkUsers", "POST", paths.bulkUsers(), { action, userIds }, s.bulkUserResultSchema);
  }

  // User attributes

  async listUserAttributes(type?: UserAttributeType): Promise<UserAttribute[]> {
    const page = await this.#get("listUserAttributes", paths.userAttributes(), s.userAttributeListSchema, {
      type,
    });
    return page.items;
  }

  async createUserAttribute(input: {
    name: string;
    type: UserAttributeType;
    displayName?: string;
  }): Promise<UserAttribute> {
    return this.#send("createUserAttribute", "POST", paths.userAttributes(), input, s.userAttributeSchema);
  }

  async updateUserAttribute(id: number, input: { displayName?: string }): Promise<UserAttribute> {
    return this.#send("updateUserAttribute", "PUT", paths.userAttribute(id), input, s.userAttributeSchema);
  }

  async getUserAttributeValues(userId: string): Promise<UserAttributeValue[] | null> {
    const page = await this.#call("getUserAttributeValues", "GET", paths.userAttributeValues(userId), {
      schema: s.userAttributeValueListSchema,
      notFoundIsNull: true,
    });
    return page === null ? null : page.items;
  }

  async upsertUserAttributeValue(input: {
    userId: string;
    attributeId: number;
    value: UserAttributeValueValue;
  }): Promise<UserAttributeValue> {
    return this.#send(
      "upsertUserAttributeValue",
      "POST",
      paths.upsertUserAttributeValue(),
      input,
      s.userAttributeValueSchema,
    );
  }

  // Embed tenants

  listEmbedTenants(): AsyncIterable<EmbedTenant> {
    const schema = s.cursorPageSchema(s.embedTenantSchema);
    return cursorPages(
      (first, after) => this.#get("listEmbedTenants", paths.embedTenants(), schema, { first, after }),
      undefined,
      this.#walk("listEmbedTenants"),
    );
  }

  async deleteEmbedTenant(name: string): Promise<void> {
    // A tenant that is already gone is deleted.
    await this.#call("deleteEmbedTenant", "DELETE", paths.embedTenant(name), { notFoundIsNull: true });
  }

  listEmbedUsers(tenant: string): AsyncIterable<EmbedUser> {
    const schema = s.cursorPageSchema(s.embedUserSchema);
    return cursorPages(
      (first, after) => this.#get("listEmbedUsers", paths.embedUsers(tenant), schema, { first, after }),
      undefined,
      this.#walk("listEmbedUsers"),
    );
  }

  listEmbedGroups(tenant: string): AsyncIterable<EmbedGroup> {
    const schema = s.cursorPageSchema(s.embedGroupSchema);
    return cursorPages(
      (first, after) => this.#get("listEmbedGroups", paths.embedGroups(tenant), schema, { first, after }),
      undefined,
      this.#walk("listEmbedGroups"),
    );
  }

  async createEmbedGroup(tenant: string, input: { name: string; description?: string }): Promise<EmbedGroup> {
    return this.#send("createEmbedGroup", "POST", paths.embedGroups(tenant), input, s.embedGroupSchema);
  }

  async getEmbedGroup(tenant: string, id: string): Promise<EmbedGroup | null> {
    return this.#call("getEmbedGroup", "GET", paths.embedGroup(tenant, id), {
      schema: s.embedGroupSchema,
      notFoundIsNull: true,
    });
  }

  async updateEmbedGroup(
    tenant: string,
    id: string,
    input: { name?: string; description?: string },
  ): Promise<EmbedGroup> {
    return this.#send("updateEmbedGroup", "PATCH", paths.embedGroup(tenant, id), input, s.embedGroupSchema);
  }

  async deleteEmbedGroup(tenant: string, id: string): Promise<boolean> {
    return (
      (await this.#call("deleteEmbedGroup", "DELETE", paths.embedGroup(tenant, id), {
        notFoundIsNull: true,
      })) !== null
    );
  }

  listEmbedGroupMembers(tenant: string, groupId: string): AsyncIterable<EmbedUser> {
    const schema = s.cursorPageSchema(s.embedUserSchema);
    return cursorPages(
      (first, after) =>
        this.#get("listEmbedGroupMembers", paths.embedGroupMembers(tenant, groupId), schema, {
          first,
          after,
        }),
      undefined,
      this.#walk("listEmbedGroupMembers"),
    );
  }

  async addEmbedGroupMembers(tenant: string, groupId: string, users: EmbedUserInput[]): Promise<void> {
    for (const part of chunk(users)) {
      await this.#send(
        "addEmbedGroupMembers",
        "POST",
        paths.embedGroupMembers(tenant, groupId),
        { users: part },
        s.memberCountSchema,
      );
    }
  }

  async removeEmbedGroupMembers(tenant: string, groupId: string, externalIds: string[]): Promise<void> {
    for (const part of chunk(externalIds)) {
      await this.#send("removeEmbedGroupMembers", "DELETE", paths.embedGroupMembers(tenant, groupId), {
        externalIds: part,
      });
    }
  }

  // The plumbing

  /** A list walk's options: its call's name, and its failures counted as the calls' are. */
  #walk(operation: string): PagesOptions {
    return { operation, onBroken: (err) => this.#requester.countFailure(err) };
  }

  async #get<T>(
    operation: string,
    path: string,
    schema: ZodType<T>,
    query?: Record<string, string | number | undefined>,
  ): Promise<T> {
    return (await this.#requester.call({ operation, method: "GET", path, query, schema })) as T;
  }

  async #send<T>(
    operation: string,
    method: "POST" | "PUT" | "PATCH" | "DELETE",
    path: string,
    body: unknown,
    schema?: ZodType<T>,
  ): Promise<T> {
    return (await this.#requester.call({ operation, method, path, body, schema })) as T;
  }

  #call<T>(
    operation: string,
    method: "GET" | "DELETE",
    path: string,
    options: { schema?: ZodType<T>; notFoundIsNull?: boolean },
  ): Promise<T | null> {
    return this.#requester.call({ operation, method, path, ...options });
  }
}

function patchBody(operations: PatchOperation[]): JsonObject {
  return { schemas: [PATCH_OP_SCHEMA], Operations: operations as unknown as JsonObject[] };
}

/** A call that failed because its answer was larger than the client reads (maxAnswerBytes). */
function isAnswerTooLarge(err: unknown): boolean {
  return (
    err instanceof PlatformError && err.cause instanceof TransportError && err.cause.kind === "too_large"
  );
}
