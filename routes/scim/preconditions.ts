import type { Request } from "express";

/** The If-Match header as the store compares it (RFC 7644 §3.14); `*` matches any version. */
export function ifMatchOf(req: Request): string | undefined {
  const value = req.get("If-Match")?.trim();
  if (!value || value === "*") return undefined;
  return value;
}

export function etagHeaders(version: string): Record<string, string> {
  return { ETag: version };
}
