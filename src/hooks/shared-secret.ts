import { createHash, timingSafeEqual } from "node:crypto";

/**
 * Compares a presented header value with the configured secret in constant time (Okta Event
 * Hooks send the secret as the whole value of the header the admin chose). Both sides are hashed
 * first, so neither the length nor the content of the secret leaks through timing.
 */
export function secretMatches(presented: string | undefined, secret: string): boolean {
  const a = createHash("sha256")
    .update(presented ?? "", "utf8")
    .digest();
  const b = createHash("sha256").update(secret, "utf8").digest();
  return timingSafeEqual(a, b) && presented !== undefined;
}
