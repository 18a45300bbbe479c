import type { Request } from "express";
import type { GroupRecord, UserRecord } from "../../src/directory/directory-types.js";
import type { JsonObject } from "../../src/scim/scim-types.js";

/**
 * The SCIM base URL of a source as the caller sees it, for `meta.location` and `Location`: scheme
 * and host from X-Forwarded-Proto / X-Forwarded-Host when server.trustProxy believes the hop they
 * came from (express's req.protocol and req.host), else the request's own.
 */
export function scimBaseUrl(req: Request, source: string): string {
  return `${req.protocol}://${req.host ?? "localhost"}/scim/v2/${encodeURIComponent(source)}`;
}

/**
 * The URI of one resource (RFC 7643 §3.1 `meta.location`): what its `meta.location` and the
 * `Location` header of an answer that carries it say (RFC 7644 §3.3, and the examples of §3.4.1
 * and §3.5.1).
 */
export function locationOf(base: string, endpoint: "Users" | "Groups", id: string): string {
  return `${base}/${endpoint}/${id}`;
}

/** A stored user as SCIM answers it (RFC 7643 §4.1), with `groups` (read-only) and `meta`. */
export function renderUser(record: UserRecord, base: string): JsonObject {
  const out: JsonObject = { ...record.resource, id: record.resource.id };
  if (record.groups.length > 0) {
    out.groups = record.groups.map((g) => ({ value: g, $ref: `${base}/Groups/${g}`, type: "direct" }));
  }
  out.meta = { ...record.meta, location: locationOf(base, "Users", record.resource.id) };
  return out;
}

/** A stored group as SCIM answers it (RFC 7643 §4.2); `members` only when they were loaded. */
export function renderGroup(record: GroupRecord, base: string): JsonObject {
  const out: JsonObject = { ...record.resource, id: record.resource.id };
  if (record.members) {
    out.members = record.members.map((m) => ({
      value: m.value,
      $ref: `${base}/Users/${m.value}`,
      type: m.type ?? "User",
      ...(m.display ? { display: m.display } : {}),
    }));
  }
  out.meta = { ...record.meta, location: locationOf(base, "Groups", record.resource.id) };
  return out;
}
