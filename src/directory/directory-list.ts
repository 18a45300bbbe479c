import type { Redis } from "ioredis";
import { caseFold, legacyFold } from "../scim/case-fold.js";
import { filterReads } from "../scim/filter-eval.js";
import type { FilterNode } from "../scim/filter-types.js";
import type { EntityKind, Json, JsonObject } from "../scim/scim-types.js";
import { metaOf, resourceOf } from "./directory-codec.js";
import { readFields, readLinkSets, readRecords } from "./directory-reader.js";
import { emailIndexKey, idsKey, isStoreId, linkSetKey, uniqueIndexKey } from "./directory-keys.js";
import type { GroupRecord, ListQuery, ListResult, UserRecord } from "./directory-types.js";
import { type IndexedLookup, indexedLookup, narrowingLookup } from "./indexed-lookup.js";
import { guarded } from "./redis-failure.js";

/**
 * Listing with filters (RFC 7644 §3.4.2): indexed `eq` lookups answer from an index; a conjunction
 * with an indexed `eq` operand applies the whole filter to that lookup's candidates; other
 * filters scan the source's ids in creation order, chunk by chunk, applying the injected matcher
 * to each resource plus its `meta` (and its group's `members` or user's `groups` when the filter
 * reads them: they are kept in sets of their own, not in the document). Results are in creation
 * order; `startIndex` is 1-based (RFC 7644 §3.4.2.4); only the requested page is kept in memory.
 */

export type FilterMatcher = (node: FilterNode, resource: JsonObject) => boolean;

export interface ListContext {
  redis: Redis;
  base: string;
  kind: EntityKind;
  matchesFilter: FilterMatcher;
  /** Ids read per scan step. */
  chunkSize: number;
  withMembers: boolean;
}

type AnyRecord = UserRecord | GroupRecord;

async function candidateIds(ctx: ListContext, lookup: IndexedLookup): Promise<string[]> {
  const { redis, base, kind } = ctx;
  switch (lookup.attribute) {
    case "id":
      return isStoreId(lookup.value) ? [lookup.value] : [];
    case "name": {
      // caseFold's key, then the plain lower case an entry written before folding has (legacyFold).
      const index = uniqueIndexKey(base, kind, "name");
      const legacy = legacyFold(lookup.value);
      const id =
        (await redis.hget(index, caseFold(lookup.value))) ??
        (legacy === undefined ? null : await redis.hget(index, legacy));
      return id ? [id] : [];
    }
    case "externalId": {
      const id = await redis.hget(uniqueIndexKey(base, kind, "externalId"), lookup.value);
      return id ? [id] : [];
    }
    case "email": {
      const ids = await redis.smembers(emailIndexKey(base, caseFold(lookup.value)));
      const legacy = legacyFold(lookup.value);
      if (legacy === undefined) return ids;
      return [...new Set([...ids, ...(await redis.smembers(emailIndexKey(base, legacy)))])];
    }
    case "linked":
      // The entities linked to a user are groups and the other way round: the value's own link set.
      return redis.smembers(linkSetKey(base, kind === "group" ? "user" : "group", lookup.value));
  }
}

/** Live ids among `ids`, in creation order. */
async function inCreationOrder(ctx: ListContext, ids: string[]): Promise<string[]> {
  if (ids.length === 0) return [];
  const scores = await ctx.redis.zmscore(idsKey(ctx.base, ctx.kind), ...ids);
  return ids
    .map((id, i) => ({ id, score: scores[i] }))
    .filter(
      (entry): entry is { id: string; score: string } => entry.score !== null && entry.score !== undefined,
    )
    .sort((a, b) => Number(a.score) - Number(b.score))
    .map((entry) => entry.id);
}

function window(query: ListQuery): { from: number; to: number } {
  const from = Math.max(1, Math.floor(query.startIndex)) - 1;
  return { from, to: from + Math.max(0, Math.floor(query.count)) };
}

async function listIndexed(
  ctx: ListContext,
  lookup: IndexedLookup,
  query: ListQuery,
): Promise<ListResult<AnyRecord>> {
  const candidates = await candidateIds(ctx, lookup);
  const { from, to } = window(query);
  if (candidates.length <= 1) {
    // One round trip less for the common unique lookup: reading it tells whether it is live.
    const found = await readRecords(ctx.redis, ctx.base, ctx.kind, candidates, ctx.withMembers);
    return { totalResults: found.length, items: found.slice(from, to) };
  }
  const ids = await inCreationOrder(ctx, candidates);
  const items = await readRecords(ctx.redis, ctx.base, ctx.kind, ids.slice(from, to), ctx.withMembers);
  return { totalResults: ids.length, items };
}

async function listAll(ctx: ListContext, query: ListQuery): Promise<ListResult<AnyRecord>> {
  const key = idsKey(ctx.base, ctx.kind);
  const { from, to } = window(query);
  const total = await ctx.redis.zcard(key);
  const ids = to > from ? await ctx.redis.zrange(key, String(from), String(to - 1)) : [];
  const items = await readRecords(ctx.redis, ctx.base, ctx.kind, ids, ctx.withMembers);
  return { totalResults: total, items };
}

/** The attribute the directory keeps outside a document: a group's members, a user's groups. */
function linkAttribute(kind: EntityKind): "members" | "groups" {
  return kind === "group" ? "members" : "groups";
}

/** The ids among `ids` (live or not) whose resource matches `filter`, in the order given. */
async function matchingIds(ctx: ListContext, filter: FilterNode, ids: string[]): Promise<string[]> {
  const fields = await readFields(ctx.redis, ctx.base, ctx.kind, ids);
  const link = linkAttribute(ctx.kind);
  const links = filterReads(filter, link)
    ? await readLinkSets(ctx.redis, ctx.base, ctx.kind, ids)
    : undefined;
  return ids.filter((id, i) => {
    const entity = fields[i];
    if (!entity || entity.doc === null || entity.tomb !== null) return false;
    const target: JsonObject = {
      ...resourceOf(id, JSON.parse(entity.doc) as JsonObject),
      meta: { ...metaOf(ctx.kind, entity) },
    };
    if (links) {
      const type = link === "members" ? "User" : "direct";
      target[link] = (links[i] ?? []).map((value): Json => ({ value, type }));
    }
    return ctx.matchesFilter(filter, target);
  });
}

/** The whole filter applied to the candidates of an index lookup that narrows it. */
async function listNarrowed(
  ctx: ListContext,
  lookup: IndexedLookup,
  filter: FilterNode,
  query: ListQuery,
): Promise<ListResult<AnyRecord>> {
  const candidates = await candidateIds(ctx, lookup);
  const ids = await matchingIds(
    ctx,
    filter,
    candidates.length <= 1 ? candidates : await inCreationOrder(ctx, candidates),
  );
  const { from, to } = window(query);
  const items = await readRecords(ctx.redis, ctx.base, ctx.kind, ids.slice(from, to), ctx.withMembers);
  return { totalResults: ids.length, items };
}

async function listScan(
  ctx: ListContext,
  filter: FilterNode,
  query: ListQuery,
): Promise<ListResult<AnyRecord>> {
  const key = idsKey(ctx.base, ctx.kind);
  const { from, to } = window(query);
  let cursor: string | null = null;
  let matched = 0;
  const pageIds: string[] = [];
  for (;;) {
    const min: string = cursor === null ? "-inf" : `(${cursor}`;
    const chunk = await ctx.redis.zrangebyscore(key, min, "+inf", "WITHSCORES", "LIMIT", 0, ctx.chunkSize);
    if (chunk.length === 0) break;
    const ids = chunk.filter((_, i) => i % 2 === 0);
    cursor = chunk[chunk.length - 1] ?? null;
    // Only the documents are read while scanning; the page's records are read in full at the end.
    for (const id of await matchingIds(ctx, filter, ids)) {
      if (matched >= from && matched < to) pageIds.push(id);
      matched += 1;
    }
    if (ids.length < ctx.chunkSize) break;
  }
  const items = await readRecords(ctx.redis, ctx.base, ctx.kind, pageIds, ctx.withMembers);
  return { totalResults: matched, items };
}

export function listEntities(ctx: ListContext, query: ListQuery): Promise<ListResult<AnyRecord>> {
  const lookup = indexedLookup(ctx.kind, query.filter);
  if (lookup) return listIndexed(ctx, lookup, query);
  if (!query.filter) return listAll(ctx, query);
  const narrowing = narrowingLookup(ctx.kind, query.filter);
  if (narrowing) return listNarrowed(ctx, narrowing, query.filter, query);
  return listScan(ctx, query.filter, query);
}

/** Every id of a creation-order set, page by page (a score cursor, so deletes never skip ids). */
export async function* scanIdPages(redis: Redis, key: string, pageSize: number): AsyncIterable<string[]> {
  let min = "-inf";
  for (;;) {
    const chunk = await guarded(() =>
      redis.zrangebyscore(key, min, "+inf", "WITHSCORES", "LIMIT", 0, pageSize),
    );
    if (chunk.length === 0) return;
    yield chunk.filter((_, i) => i % 2 === 0);
    if (chunk.length < 2 * pageSize) return;
    min = `(${chunk[chunk.length - 1]}`;
  }
}
