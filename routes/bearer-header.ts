import type { Request } from "express";

/**
 * RFC 6750 §2.1 allows one or more spaces between "Bearer" and the token; passport-http-bearer
 * splits on a single space. Folds the gap to one space before authentication.
 */
export function normalizeBearerHeader(req: Request): void {
  const header = req.headers.authorization;
  if (header !== undefined) req.headers.authorization = header.trim().replace(/^(\S+)\s+/, "$1 ");
}
