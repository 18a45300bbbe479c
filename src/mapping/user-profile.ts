import {
  SCHEMA_ENTERPRISE_USER,
  SCHEMA_USER,
  type Json,
  type JsonObject,
  type PatchOperation,
} from "../scim/scim-types.js";

/**
 * The part of a user the platform keeps (platform-api.yaml, ScimUser): userName, externalId,
 * name.givenName/familyName, displayName, emails, and the enterprise extension's department,
 * costCenter, division, organization, employeeNumber and manager.value. `active` is not part of
 * the profile: it goes through the bulk lifecycle endpoint.
 */
export interface UserProfile {
  userName: string;
  externalId?: string;
  givenName?: string;
  familyName?: string;
  displayName?: string;
  emails?: Array<{ value: string; type?: string; primary?: true }>;
  department?: string;
  costCenter?: string;
  division?: string;
  organization?: string;
  employeeNumber?: string;
  manager?: string;
}

/**
 * What the executor found out about the desired user's enterprise `manager.value` before planning.
 * RFC 7643 §4.3: the value is "the id of the SCIM resource representing the User's manager"; an
 * identity provider sends the id it knows (the bridge's), the platform needs its own.
 */
export type ManagerLookup =
  /** The value is the id of a user of the same source: its platform id, or null while it has none. */
  | { value: string; sourceUser: true; platformId: string | null }
  /**
   * Not a user of this source (an employee number, another system's id): forwarded as it is. But a
   * value that was a user of this source when the user's manager was last translated, and is no
   * more (the manager deleted at the source, its keys purged, while the identity provider still
   * names it): `kept` is the platform id it was translated to, and the platform keeps it.
   */
  | { value: string; sourceUser: false; kept?: string };

/**
 * The translation of a manager value the platform last got for a user (recorded with the applied
 * profile, AppliedUser.managerTranslation): the source value (the manager's bridge id) and the
 * platform id it became.
 */
export interface ManagerTranslation {
  from: string;
  to: string;
}

/**
 * Decides what is known about a desired manager `value` from what the executor found: `found` is
 * the user of this source of that id (its platform id, or null while it has none), or null when no
 * user of this source has it (any longer); `last` is the translation recorded for the user whose
 * manager this is. A value no longer a user of the source keeps its last translation (the platform
 * already holds that id: the bridge id would mean nothing to it); any other value is forwarded.
 * Pure.
 */
export function managerLookupOf(
  value: string,
  found: { platformId: string | null } | null,
  last: ManagerTranslation | undefined,
): ManagerLookup {
  if (found) return { value, sourceUser: true, platformId: found.platformId };
  if (last && last.from === value) return { value, sourceUser: false, kept: last.to };
  return { value, sourceUser: false };
}

const ENTERPRISE_FIELDS = ["department", "costCenter", "division", "organization", "employeeNumber"] as const;

function str(v: Json | undefined): string | undefined {
  return typeof v === "string" && v !== "" ? v : undefined;
}

function obj(v: Json | undefined): JsonObject | undefined {
  return v && typeof v === "object" && !Array.isArray(v) ? v : undefined;
}

function normaliseEmails(v: Json | undefined): UserProfile["emails"] {
  if (!Array.isArray(v)) return undefined;
  const out: NonNullable<UserProfile["emails"]> = [];
  for (const e of v) {
    const o = obj(e);
    const value = str(o?.["value"]);
    if (!o || !value) continue;
    const email: NonNullable<UserProfile["emails"]>[number] = { value };
    const type = str(o["type"]);
    if (type) email.type = type;
    if (o["primary"] === true) email.primary = true;
    out.push(email);
  }
  return out.length === 0 ? undefined : out;
}

/** Maps a SCIM user (the directory's, or the platform's) to the profile the platform keeps. */
export function toUserProfile(user: JsonObject): UserProfile {
  const name = obj(user["name"]);
  const ent = obj(user[SCHEMA_ENTERPRISE_USER]);
  const profile: UserProfile = { userName: String(user["userName"] ?? "") };
  const set = <K extends keyof UserProfile>(key: K, value: UserProfile[K] | undefined) => {
    if (value !== undefined) profile[key] = value;
  };
  set("externalId", str(user["externalId"]));
  set("givenName", str(name?.["givenName"]));
  set("familyName", str(name?.["familyName"]));
  set("displayName", str(user["displayName"]));
  set("emails", normaliseEmails(user["emails"]));
  for (const field of ENTERPRISE_FIELDS) set(field, str(ent?.[field]));
  set("manager", managerValueOf(user));
  return profile;
}

/** The enterprise extension's `manager.value` (RFC 7643 §4.3), as the profile reads it. */
export function managerValueOf(user: JsonObject): string | undefined {
  const manager = obj(user[SCHEMA_ENTERPRISE_USER])?.["manager"];
  return typeof manager === "string" ? str(manager) : str(obj(manager)?.["value"]);
}

/**
 * The manager value the platform gets for `user`, given what the executor looked up: the
 * manager's platform id when it is a user of this source that has one; left out (undefined) and
 * `waitingFor` its bridge id when it is a user of this source without one yet; the platform id
 * last translated to when the value is no longer a user of this source (`kept`). Returns undefined
 * when there is nothing to translate (no manager, no lookup for this value, or a value that never
 * was a user of this source): the value is then forwarded as it is.
 */
export function resolveManager(
  user: JsonObject,
  lookup: ManagerLookup | undefined,
): { value: string | undefined; waitingFor?: string } | undefined {
  const value = managerValueOf(user);
  if (value === undefined || !lookup || lookup.value !== value) return undefined;
  if (!lookup.sourceUser) return lookup.kept !== undefined ? { value: lookup.kept } : undefined;
  if (lookup.platformId) return { value: lookup.platformId };
  return { value: undefined, waitingFor: value };
}

/**
 * The translation the profile synced for `user` holds (resolveManager): the source value and the
 * platform id the platform gets for it; undefined when the manager is forwarded as it is, left out,
 * or absent. Pure.
 */
export function managerTranslationOf(
  user: JsonObject,
  lookup: ManagerLookup | undefined,
): ManagerTranslation | undefined {
  const resolved = resolveManager(user, lookup);
  const from = managerValueOf(user);
  return resolved?.value !== undefined && from !== undefined ? { from, to: resolved.value } : undefined;
}

/**
 * The profile the sync brings the platform to for `user`: its manager as resolveManager decides
 * (the manager's platform id; left out while it has none; the platform id last translated to for a
 * value no longer a user of the source; any other value as it is).
 */
export function profileAsSynced(user: JsonObject, lookup: ManagerLookup | undefined): UserProfile {
  const profile = toUserProfile(user);
  const manager = resolveManager(user, lookup);
  if (manager?.value !== undefined) profile.manager = manager.value;
  else if (manager) delete profile.manager;
  return profile;
}

/** The body of a platform SCIM create (RFC 7644 §3.3). */
export function toPlatformUserBody(profile: UserProfile, active: boolean): JsonObject {
  const body: JsonObject = { schemas: [SCHEMA_USER], userName: profile.userName, active };
  if (profile.externalId) body["externalId"] = profile.externalId;
  const name: JsonObject = {};
  if (profile.givenName) name["givenName"] = profile.givenName;
  if (profile.familyName) name["familyName"] = profile.familyName;
  if (Object.keys(name).length > 0) body["name"] = name;
  if (profile.displayName) body["displayName"] = profile.displayName;
  if (profile.emails) body["emails"] = profile.emails as Json;
  const ent: JsonObject = {};
  for (const field of ENTERPRISE_FIELDS) if (profile[field]) ent[field] = profile[field] as string;
  if (profile.manager) ent["manager"] = { value: profile.manager };
  if (Object.keys(ent).length > 0) {
    body["schemas"] = [SCHEMA_USER, SCHEMA_ENTERPRISE_USER];
    body[SCHEMA_ENTERPRISE_USER] = ent;
  }
  return body;
}

const PATHS: Record<keyof UserProfile, string> = {
  userName: "userName",
  externalId: "externalId",
  givenName: "name.givenName",
  familyName: "name.familyName",
  displayName: "displayName",
  emails: "emails",
  department: `${SCHEMA_ENTERPRISE_USER}:department`,
  costCenter: `${SCHEMA_ENTERPRISE_USER}:costCenter`,
  division: `${SCHEMA_ENTERPRISE_USER}:division`,
  organization: `${SCHEMA_ENTERPRISE_USER}:organization`,
  employeeNumber: `${SCHEMA_ENTERPRISE_USER}:employeeNumber`,
  manager: `${SCHEMA_ENTERPRISE_USER}:manager`,
};

/**
 * How a profile value compares: emails as a set. The contract promises no order of a multi-valued
 * attribute's values, and a platform may answer them in another order than they were sent in (the
 * `primary` flag, not the position, marks the preferred one); anything else as it is.
 */
function comparable(key: keyof UserProfile, value: UserProfile[keyof UserProfile]): string {
  if (key === "emails" && Array.isArray(value)) {
    return JSON.stringify(value.map((email) => JSON.stringify(email)).sort());
  }
  return JSON.stringify(value);
}

/**
 * PATCH operations (RFC 7644 §3.5.2) that turn `applied` into `desired`: `replace` for a changed
 * value, `remove` for a value gone at the source. Unchanged attributes are not sent.
 */
export function diffUserProfile(applied: UserProfile, desired: UserProfile): PatchOperation[] {
  const ops: PatchOperation[] = [];
  for (const key of Object.keys(PATHS) as Array<keyof UserProfile>) {
    const a = applied[key];
    const d = desired[key];
    if (comparable(key, a) === comparable(key, d)) continue;
    const path = PATHS[key];
    if (d === undefined) ops.push({ op: "remove", path });
    else if (key === "manager") ops.push({ op: "replace", path, value: { value: d as string } });
    else ops.push({ op: "replace", path, value: d as Json });
  }
  return ops;
}
