/**
 * What an operator does about a dead letter, by its code (docs/operations.md, "Finding and fixing
 * what went wrong"): printed by `dead-letters list` (once per code) and `status <ref>` (for a dead
 * entity). Codes without advice print none.
 */

const RETRY_ALL = "then scim-bridge dead-letters retry";

/** Transient failures that outlasted the job's attempts: a reconciliation syncs them again once. */
const TRANSIENT = new Set([
  "platform_server",
  "platform_timeout",
  "platform_network",
  "platform_rate_limited",
  "platform_bulk_internal",
  "platform_bulk_unconfirmed",
  "platform_inconsistent",
  "redis_unavailable",
]);

const ADVICE: Record<string, string> = {
  platform_unauthorized: `the platform refused the bridge's token: set a valid platform.token (PLATFORM_TOKEN), restart the bridge, ${RETRY_ALL}`,
  platform_forbidden: `the platform refused the call for the bridge's token: give the token the rights it lacks (or set a valid platform.token and restart), ${RETRY_ALL}`,
  platform_conflict:
    "the platform holds another object of that unique name (owned by no source?): remove or rename it on the platform, or change the name at the identity provider (the letter goes once the entity syncs), then retry",
  platform_bad_request:
    "the platform refused the request (the reason says what: a value, or a group's member add or removal): fix it at the identity provider (the letter goes once the entity syncs), in the source's attribute rules or on the platform, then retry",
  attribute_type_clash:
    "a platform attribute of that name has another type: change the source's attribute rule or the platform attribute, then retry",
  ownership_conflict:
    "another source owns that platform object (or a dead letter of a deleted entity still holds it): settle that first, then retry",
  platform_invalid_response:
    "the platform answered outside its contract (the reason names the call: a body of the wrong shape, a list whose pages cannot be walked, or an answer over platform.maxAnswerBytes): raise platform.maxAnswerBytes for a large answer, or have the platform fixed, then retry",
  internal: "a bug in the bridge or a Redis error reply: read the reason and the error lines, then retry",
  not_converging:
    "the platform kept differing from the plan (a value it rewrites?): compare the entity with the platform, then retry",
  unknown_source:
    "its source is no longer configured: discard it (scim-bridge dead-letters discard <source>/<kind>/<id>)",
};

const TRANSIENT_ADVICE =
  "a transient failure outlasted the attempts (an outage): the next reconciliation of its source syncs it again once, or now: scim-bridge dead-letters retry";

const BULK_ADVICE =
  "the platform refused this user's bulk action (activate, deactivate, delete; the reason says why): fix the cause, then retry";

/** The advice for a dead letter's code, or undefined when there is none to give. */
export function deadLetterAdvice(code: string | undefined): string | undefined {
  if (code === undefined) return undefined;
  if (TRANSIENT.has(code)) return TRANSIENT_ADVICE;
  if (code.startsWith("platform_bulk_")) return BULK_ADVICE;
  return Object.hasOwn(ADVICE, code) ? ADVICE[code] : undefined;
}

/** One line per code with advice, in the order the codes first appear: `code (count): advice`. */
export function adviceLines(codes: readonly string[]): string[] {
  const counts = new Map<string, number>();
  for (const code of codes) counts.set(code, (counts.get(code) ?? 0) + 1);
  return [...counts].flatMap(([code, n]) => {
    const advice = deadLetterAdvice(code);
    return advice === undefined ? [] : [`  ${code} (${n}): ${advice}`];
  });
}
