import type { Redis } from "ioredis";
import { NotFoundError, PreconditionFailedError } from "../errors.js";
import type { EntityKind } from "../scim/scim-types.js";
import { ifMatchGenerations } from "./directory-codec.js";
import { entityKey, isStoreId } from "./directory-keys.js";

/** If-Match handling of the directory's writes (RFC 7644 §3.14, RFC 7232 §3.1, weak comparison). */

function given(ifMatch: string | undefined): ifMatch is string {
  return ifMatch !== undefined && ifMatch.trim() !== "";
}

/** Throws PreconditionFailedError when `generation` is not one the If-Match header names. */
export function checkIfMatch(generation: number, ifMatch: string | undefined): void {
  if (!given(ifMatch)) return;
  const generations = ifMatchGenerations(ifMatch);
  if (generations !== "any" && !generations.includes(String(generation))) throw new PreconditionFailedError();
}

/**
 * Throws PreconditionFailedError when the If-None-Match header names `generation` or is `*` (RFC
 * 7232 §3.2: the condition fails when the current version matches, or for `*` when the entity
 * exists). The caller's write must then expect exactly `generation`, so the check holds at the write.
 */
export function checkIfNoneMatch(generation: number, ifNoneMatch: string | undefined): void {
  if (!given(ifNoneMatch)) return;
  const generations = ifMatchGenerations(ifNoneMatch);
  if (generations === "any" || generations.includes(String(generation))) throw new PreconditionFailedError();
}

/**
 * The generation a write must find for its If-Match and If-None-Match headers, for a write that has
 * not read the entity (a delete, a group PUT): what expectedGeneration gives for If-Match, and with
 * an If-None-Match, the current generation once checked against it (404 when the entity does not
 * exist), so that the write applies only at the generation the header was checked against.
 */
export async function expectedGenerationOf(
  redis: Redis,
  kind: EntityKind,
  base: string,
  id: string,
  conditions: { ifMatch?: string; ifNoneMatch?: string } | undefined,
): Promise<string> {
  const expected = await expectedGeneration(redis, kind, base, id, conditions?.ifMatch);
  if (!given(conditions?.ifNoneMatch)) return expected;
  const notFound = new NotFoundError(`${kind === "user" ? "User" : "Group"} ${id} not found`);
  if (!isStoreId(id)) throw notFound;
  const [gen, tomb] = await redis.hmget(entityKey(base, kind, id), "gen", "tomb");
  if (gen === null || gen === undefined || tomb) throw notFound;
  checkIfNoneMatch(Number(gen), conditions?.ifNoneMatch);
  if (expected !== "" && expected !== gen) throw new PreconditionFailedError();
  return gen;
}

/**
 * The generation a write script must find for an If-Match header: "" when there is none or it is
 * `*`, the tag's generation for a single tag, and the current generation when several tags are
 * given and it is one of them (else 412; 404 when the entity does not exist).
 */
export async function expectedGeneration(
  redis: Redis,
  kind: EntityKind,
  base: string,
  id: string,
  ifMatch: string | undefined,
): Promise<string> {
  if (!given(ifMatch)) return "";
  const generations = ifMatchGenerations(ifMatch);
  if (generations === "any") return "";
  if (generations.length === 1) return generations[0] ?? "";
  const notFound = new NotFoundError(`${kind === "user" ? "User" : "Group"} ${id} not found`);
  if (!isStoreId(id)) throw notFound;
  const [gen, tomb] = await redis.hmget(entityKey(base, kind, id), "gen", "tomb");
  if (gen === null || gen === undefined || tomb) throw notFound;
  if (!generations.includes(gen)) throw new PreconditionFailedError();
  return gen;
}
