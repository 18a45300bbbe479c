/**
 * RFC 7644 §3.5.2 PatchOp applied to stored users and groups. Operations are applied to a copy
 * and committed only when all succeed (§3.5.2: a failed operation leaves the resource unchanged).
 * Op names are lower-case only (the contract's enum; validated before we get here).
 */
import { SCHEMA_ENTERPRISE_USER } from "../../scim/scim-types.js";
import { badRequest, violation } from "./emulator-error.js";
import { ENTERPRISE_FIELDS, type StoredEmail, type StoredUser } from "./scim-store.js";

export interface PatchOperationInput {
  op: "add" | "remove" | "replace";
  path?: string;
  value?: unknown;
}

type Obj = Record<string, unknown>;
const CORE_PREFIX = "urn:ietf:params:scim:schemas:core:2.0:user:";
const ENTERPRISE_PREFIX = `${SCHEMA_ENTERPRISE_USER.toLowerCase()}:`;

function requireString(path: string, value: unknown): string {
  if (typeof value !== "string") throw violation(`${path} must be a string`, "invalidValue");
  return value;
}

function optionalString(path: string, value: unknown, remove: boolean): string | undefined {
  return remove ? undefined : requireString(path, value);
}

function emailsFrom(value: unknown): StoredEmail[] {
  if (!Array.isArray(value)) throw violation("emails must be an array", "invalidValue");
  return value.map((e: Obj) => {
    if (!e || typeof e.value !== "string")
      throw violation("every email needs a string value", "invalidValue");
    return {
      value: e.value,
      ...(typeof e.type === "string" ? { type: e.type } : {}),
      ...(typeof e.primary === "boolean" ? { primary: e.primary } : {}),
    };
  });
}

function setEnterprise(user: StoredUser, field: string, value: unknown, remove: boolean): void {
  const key = field === "manager.value" ? "manager" : field;
  if (key !== "manager" && !(ENTERPRISE_FIELDS as readonly string[]).includes(key)) {
    throw badRequest(`unsupported path ${SCHEMA_ENTERPRISE_USER}:${field}`, "invalidPath");
  }
  const k = key as keyof StoredUser["enterprise"];
  if (remove) {
    delete user.enterprise[k];
    return;
  }
  const v =
    key === "manager" && field === "manager" && value && typeof value === "object"
      ? (value as Obj).value
      : value;
  user.enterprise[k] = requireString(field, v);
}

/** Applies one attribute path (already stripped of the core URN prefix) to a user copy. */
function applyUserPath(
  user: StoredUser,
  rawPath: string,
  value: unknown,
  op: PatchOperationInput["op"],
): void {
  const remove = op === "remove";
  let path = rawPath;
  if (path.toLowerCase().startsWith(CORE_PREFIX)) path = path.slice(CORE_PREFIX.length);
  if (path.toLowerCase().startsWith(ENTERPRISE_PREFIX)) {
    setEnterprise(user, path.slice(ENTERPRISE_PREFIX.length), value, remove);
    return;
  }
  if (path.toLowerCase() === SCHEMA_ENTERPRISE_USER.toLowerCase()) {
    if (!value || typeof value !== "object")
      throw violation("extension value must be an object", "invalidValue");
    for (const [field, v] of Object.entries(value as Obj)) setEnterprise(user, field, v, false);
    return;
  }
  const emailByType = /^emails\[type eq "([^"]*)"\]\.value$/i.exec(path);
  if (emailByType) {
    const type = emailByType[1] ?? "";
    user.emails = user.emails.filter((e) => e.type !== type || !remove);
    if (!remove) {
      const existing = user.emails.find((e) => e.type === type);
      if (existing) existing.value = requireString(path, value);
      else user.emails.push({ value: requireString(path, value), type });
    }
    return;
  }
  switch (path.toLowerCase()) {
    case "username":
      if (remove) throw badRequest("userName is required", "mutability");
      user.userName = requireString(path, value);
      return;
    case "externalid":
      user.externalId = optionalString(path, value, remove);
      return;
    case "displayname":
      user.displayName = optionalString(path, value, remove);
      return;
    case "active":
      if (remove) throw badRequest("active cannot be removed", "mutability");
      if (typeof value !== "boolean") throw violation("active must be a boolean", "invalidValue");
      user.active = value;
      return;
    case "name.givenname":
      user.givenName = optionalString(path, value, remove);
      return;
    case "name.familyname":
      user.familyName = optionalString(path, value, remove);
      return;
    case "name": {
      const name = (remove ? {} : (value ?? {})) as Obj;
      if (remove || op === "replace") {
        user.givenName = undefined;
        user.familyName = undefined;
      }
      if (name.givenName !== undefined) user.givenName = requireString("name.givenName", name.givenName);
      if (name.familyName !== undefined) user.familyName = requireString("name.familyName", name.familyName);
      return;
    }
    case "emails":
      if (remove) user.emails = [];
      else if (op === "add") user.emails = [...user.emails, ...emailsFrom(value)];
      else user.emails = emailsFrom(value);
      return;
    case "schemas":
    case "id":
    case "meta":
      throw badRequest(`${path} cannot be changed`, "mutability");
    default:
      throw badRequest(`unsupported path ${rawPath}`, "invalidPath");
  }
}

export function cloneUser(user: StoredUser): StoredUser {
  return { ...user, emails: user.emails.map((e) => ({ ...e })), enterprise: { ...user.enterprise } };
}

/** Returns the patched copy of `user`; throws without side effects on the first bad operation. */
export function patchUser(user: StoredUser, operations: PatchOperationInput[]): StoredUser {
  const copy = cloneUser(user);
  for (const operation of operations) {
    if (operation.path !== undefined) {
      applyUserPath(copy, operation.path, operation.value, operation.op);
      continue;
    }
    if (operation.op === "remove") throw badRequest("remove needs a path", "noTarget");
    if (!operation.value || typeof operation.value !== "object" || Array.isArray(operation.value)) {
      throw violation("an operation without path needs an object value", "invalidValue");
    }
    for (const [key, value] of Object.entries(operation.value as Obj)) {
      applyUserPath(copy, key, value, operation.op);
    }
  }
  return copy;
}

export interface GroupPatchResult {
  displayName: string;
  externalId?: string;
  members: Set<string>;
}

const MEMBER_FILTER = /^members\[value eq "((?:[^"\\]|\\.)*)"\]$/i;

function memberValues(value: unknown): string[] {
  if (!Array.isArray(value)) throw violation("members value must be an array", "invalidValue");
  return value.map((m: Obj) => {
    if (!m || typeof m.value !== "string")
      throw violation("every member needs a string value", "invalidValue");
    return m.value;
  });
}

/**
 * Applies PatchOp to a group's fields and members (a new Set); `isUser` checks member ids. With
 * `noTargetOnMissingMember`, removing a member that is not in the group fails with 400 noTarget
 * (RFC 7644 §3.5.2.2 and §3.12: the path's filter yields no match).
 */
export function patchGroup(
  group: GroupPatchResult,
  operations: PatchOperationInput[],
  isUser: (id: string) => boolean,
  options: { noTargetOnMissingMember?: boolean } = {},
): GroupPatchResult {
  const out: GroupPatchResult = { ...group, members: new Set(group.members) };
  const checked = (ids: string[]) => {
    for (const id of ids)
      if (!isUser(id)) throw badRequest(`member ${id} is not a platform user`, "invalidValue");
    return ids;
  };
  const applyField = (path: string, value: unknown, op: PatchOperationInput["op"]) => {
    const key = path.toLowerCase();
    if (key === "displayname") {
      if (op === "remove") throw badRequest("displayName is required", "mutability");
      out.displayName = requireString(path, value);
    } else if (key === "externalid") {
      out.externalId = optionalString(path, value, op === "remove");
    } else if (key === "members") {
      if (op === "remove") {
        if (value === undefined) out.members.clear();
        else for (const id of memberValues(value)) out.members.delete(id);
      } else {
        const ids = checked(memberValues(value));
        if (op === "replace") out.members.clear();
        for (const id of ids) out.members.add(id);
      }
    } else {
      throw badRequest(`unsupported path ${path}`, "invalidPath");
    }
  };
  for (const operation of operations) {
    const filtered = operation.path ? MEMBER_FILTER.exec(operation.path) : null;
    if (filtered) {
      if (operation.op !== "remove") throw badRequest("only remove takes a members filter", "invalidPath");
      const id = JSON.parse(`"${filtered[1] ?? ""}"`) as string;
      if (!out.members.delete(id) && options.noTargetOnMissingMember) {
        throw badRequest(`${id} is not a member of the group`, "noTarget");
      }
    } else if (operation.path !== undefined) {
      applyField(operation.path, operation.value, operation.op);
    } else {
      if (operation.op === "remove") throw badRequest("remove needs a path", "noTarget");
      if (!operation.value || typeof operation.value !== "object" || Array.isArray(operation.value)) {
        throw violation("an operation without path needs an object value", "invalidValue");
      }
      for (const [key, value] of Object.entries(operation.value as Obj)) applyField(key, value, operation.op);
    }
  }
  return out;
}
