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
