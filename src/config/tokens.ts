import { createHash, randomBytes, timingSafeEqual } from "node:crypto";

/** `sha256:<hex>` form of a token, as written in the config file. */
export function hashToken(token: string): string {
  return `sha256:${createHash("sha256").update(token, "utf8").digest("hex")}`;
}

/** A fresh random bearer token (256 bits, URL-safe). */
export function newToken(): string {
  return randomBytes(32).toString("base64url");
}

function digestOf(stored: string): Buffer {
  if (/^sha256:[0-9a-f]{64}$/i.test(stored)) return Buffer.from(stored.slice(7), "hex");
  return createHash("sha256").update(stored, "utf8").digest();
}

/**
 * A set of configured tokens (plain or `sha256:<hex>`), matched by hash in constant time: the
 * presented token is hashed, and every digest is compared with timingSafeEqual.
 */
export class TokenSet<T> {
  private readonly entries: Array<{ digest: Buffer; value: T }> = [];

  add(stored: string, value: T): void {
    this.entries.push({ digest: digestOf(stored), value });
  }

  match(presented: string): T | undefined {
    const digest = createHash("sha256").update(presented, "utf8").digest();
    let found: T | undefined;
    for (const entry of this.entries) {
      // No early exit: every entry is compared, whatever matched.
      if (timingSafeEqual(entry.digest, digest) && found === undefined) found = entry.value;
    }
    return found;
  }

  get size(): number {
    return this.entries.length;
  }
}
