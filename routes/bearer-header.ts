import type { Request } from "express";

/**
 * RFC 6750 §2.1 allows one or more spaces between "Bearer" and the token; passport-http-bearer
 * splits on a single space. Folds the gap to one space before authentication.
 */
export function normalizeBearerHeader(req: Request): void {
  const header = req.headers.authorization;
  if (header !== undefined) req.headers.authorization = header.trim().replace(/^(\S+)\s+/, "$1 ");
}

/**
 * The token of an `Authorization: Bearer <token>` header (RFC 6750 §2.1: the scheme in any case,
 * one or more spaces, then a token without spaces); undefined for anything else.
 */
export function bearerTokenOf(header: string | undefined): string | undefined {
  if (header === undefined) return undefined;
  const match = /^\s*bearer +(\S+)\s*$/i.exec(header);
  return match?.[1];
}
