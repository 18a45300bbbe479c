/**
 * How deep a request body may nest objects and arrays, on every intake path that stores what it
 * is sent (SCIM bodies, signed events). The deepest a SCIM message needs is about 5 (a PatchOp:
 * body, Operations, operation, a value list, an element), and a signed-events delivery wraps a
 * SCIM resource in 3 more (`{"events": [{"data": ...}]}`); past this limit a body is refused.
 * Without one, a body nested some thousands deep was stored nowhere but answered 500
 * (JSON.stringify ran out of stack while writing it), which a sender retries forever.
 */
export const MAX_BODY_NESTING = 32;

/** Whether `value` nests objects or arrays deeper than `max` (recursion bounded by `max`). */
export function nestsDeeperThan(value: unknown, max: number): boolean {
  if (value === null || typeof value !== "object") return false;
  if (max === 0) return true;
  const children = Array.isArray(value) ? value : Object.values(value);
  for (const child of children) if (nestsDeeperThan(child, max - 1)) return true;
  return false;
}
