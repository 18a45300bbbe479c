import type { Config } from "../config/config-schema.js";
import { TokenSet } from "../config/tokens.js";

export type AdminRole = "viewer" | "admin";

/** Who an admin request is authenticated as. `name` names the token, never its value. */
export interface AdminPrincipal {
  kind: "admin";
  name: string;
  role: AdminRole;
}

/**
 * Resolves a presented bearer token to an admin principal. Config entries are a token string
 * (plain or `sha256:<hex>`, role admin) or `{token, role, name?}`. A token that belongs to a
 * source is refused even if it is also listed as an admin token: SCIM tokens never open the
 * admin API.
 */
export class AdminPrincipals {
  private readonly admins = new TokenSet<AdminPrincipal>();
  private readonly sourceTokens = new TokenSet<string>();

  constructor(config: Pick<Config, "admin" | "sources">) {
    config.admin.tokens.forEach((entry, index) => {
      if (typeof entry === "string") {
        this.admins.add(entry, { kind: "admin", name: `admin-token-${index + 1}`, role: "admin" });
      } else {
        this.admins.add(entry.token, {
          kind: "admin",
          name: entry.name ?? `${entry.role}-token-${index + 1}`,
          role: entry.role,
        });
      }
    });
    for (const [id, source] of Object.entries(config.sources)) {
      for (const token of source.tokens) this.sourceTokens.add(token, id);
    }
  }

  resolve(token: string): AdminPrincipal | undefined {
    const admin = this.admins.match(token);
    const source = this.sourceTokens.match(token);
    return source === undefined ? admin : undefined;
  }
}

/** Viewers read; admins also trigger, confirm, discard and retry. */
export function allows(role: AdminRole, needed: AdminRole): boolean {
  return needed === "viewer" || role === "admin";
}
