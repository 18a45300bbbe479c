import type { Request } from "express";
import { locationOf } from "./scim-render.js";

/** The If-Match header as the store compares it (RFC 7644 §3.14); `*` matches any version. */
export function ifMatchOf(req: Request): string | undefined {
  const value = req.get("If-Match")?.trim();
  if (!value || value === "*") return undefined;
  return value;
}

/** The If-None-Match header as the store compares it on a write (RFC 7232 §3.2); `*` is kept. */
export function ifNoneMatchOf(req: Request): string | undefined {
  const value = req.get("If-None-Match")?.trim();
  return value ? value : undefined;
}

/**
 * The preconditions of a write (RFC 7644 §3.14): If-Match (a version other than the current one is
 * 412) and If-None-Match (the current version, or `*`, is 412; RFC 7232 §3.2 for a method other
 * than GET and HEAD, whose If-None-Match is answered 304 by the response).
 */
export function preconditionsOf(req: Request): { ifMatch?: string; ifNoneMatch?: string } {
  return { ifMatch: ifMatchOf(req), ifNoneMatch: ifNoneMatchOf(req) };
}

export function etagHeaders(version: string): Record<string, string> {
  return { ETag: version };
}

/**
 * The headers of an answer that carries one resource: `ETag` (its version, RFC 7644 §3.14) and
 * `Location` (its `meta.location` under `base`, scimBaseUrl; §3.3 for a create, the examples of
 * §3.4.1 and §3.5.1 for GET and PUT). Both are sent even when `attributes` leaves `meta` out of the
 * body.
 */
export function resourceHeaders(
  base: string,
  endpoint: "Users" | "Groups",
  record: { meta: { version: string }; resource: { id: string } },
): Record<string, string> {
  return { Location: locationOf(base, endpoint, record.resource.id), ETag: record.meta.version };
}
