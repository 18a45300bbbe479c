import type { Redis } from "ioredis";
import type { EntityKind, GroupMember, JsonObject, ScimGroup, ScimUser } from "../scim/scim-types.js";
import { ENTITY_FIELDS, type EntityFields, metaOf, resourceOf, toFields } from "./directory-codec.js";
import { entityKey, groupMembersKey, isStoreId, linkSetKey, userGroupsKey } from "./directory-keys.js";
import type { GroupRecord, UserRecord } from "./directory-types.js";
import type { PutOutcome } from "./directory-writer.js";

/** Reads of the directory (no writes): records by id, in one round trip per batch. */

type PipelineResult = [Error | null, unknown][] | null;

function results(raw: PipelineResult): unknown[] {
  if (!raw) throw new Error("Redis pipeline was aborted");
  return raw.map(([err, value]) => {
    if (err) throw err;
    return value;
  });
}

/** Sorted copy: member and group id lists are returned in a stable (lexicographic) order. */
function sorted(ids: unknown): string[] {
  return [...((ids as string[] | null) ?? [])].sort();
}

function live(fields: EntityFields): boolean {
  return fields.doc !== null && fields.tomb === null && fields.gen !== null;
}

export function userRecord(id: string, fields: EntityFields, groups: string[]): UserRecord {
  return {
    resource: resourceOf(id, JSON.parse(fields.doc ?? "{}") as JsonObject) as ScimUser,
    meta: metaOf("user", fields),
    generation: Number(fields.gen),
    groups,
  };
}

export function groupRecord(
  id: string,
  fields: EntityFields,
  memberCount: number,
  members?: string[],
): GroupRecord {
  const record: GroupRecord = {
    resource: resourceOf(id, JSON.parse(fields.doc ?? "{}") as JsonObject) as ScimGroup,
    meta: metaOf("group", fields),
    generation: Number(fields.gen),
    memberCount,
  };
  if (members) record.members = members.map((value): GroupMember => ({ value, type: "User" }));
  return record;
}

/** Raw hash fields of several entities (tombstones and missing ones included). */
export async function readFields(
  redis: Redis,
  base: string,
  kind: EntityKind,
  ids: string[],
): Promise<EntityFields[]> {
  const valid = ids.filter(isStoreId);
  if (valid.length === 0) return ids.map(() => toFields([]));
  const pipeline = redis.pipeline();
  for (const id of valid) pipeline.hmget(entityKey(base, kind, id), ...ENTITY_FIELDS);
  const read = results(await pipeline.exec());
  let next = 0;
  return ids.map((id) => toFields(isStoreId(id) ? (read[next++] as (string | null)[]) : []));
}

/** Each entity's own link set (a user's groups, a group's members), in the order asked, unsorted. */
export async function readLinkSets(
  redis: Redis,
  base: string,
  kind: EntityKind,
  ids: string[],
): Promise<string[][]> {
  if (ids.length === 0) return [];
  const pipeline = redis.pipeline();
  for (const id of ids) pipeline.smembers(linkSetKey(base, kind, id));
  return results(await pipeline.exec()) as string[][];
}

/** Live users by id, in the order asked; deleted or unknown ids are left out. */
export async function readUsers(redis: Redis, base: string, allIds: string[]): Promise<UserRecord[]> {
  const ids = allIds.filter(isStoreId);
  if (ids.length === 0) return [];
  const pipeline = redis.pipeline();
  for (const id of ids) {
    pipeline.hmget(entityKey(base, "user", id), ...ENTITY_FIELDS);
    pipeline.smembers(userGroupsKey(base, id));
  }
  const values = results(await pipeline.exec());
  const records: UserRecord[] = [];
  ids.forEach((id, i) => {
    const fields = toFields(values[2 * i] as (string | null)[]);
    if (live(fields)) records.push(userRecord(id, fields, sorted(values[2 * i + 1])));
  });
  return records;
}

/** Live groups by id, in the order asked; deleted or unknown ids are left out. */
export async function readGroups(
  redis: Redis,
  base: string,
  allIds: string[],
  withMembers: boolean,
): Promise<GroupRecord[]> {
  const ids = allIds.filter(isStoreId);
  if (ids.length === 0) return [];
  const pipeline = redis.pipeline();
  for (const id of ids) {
    pipeline.hmget(entityKey(base, "group", id), ...ENTITY_FIELDS);
    if (withMembers) pipeline.smembers(groupMembersKey(base, id));
    else pipeline.scard(groupMembersKey(base, id));
  }
  const values = results(await pipeline.exec());
  const records: GroupRecord[] = [];
  ids.forEach((id, i) => {
    const fields = toFields(values[2 * i] as (string | null)[]);
    if (!live(fields)) return;
    if (withMembers) {
      const members = sorted(values[2 * i + 1]);
      records.push(groupRecord(id, fields, members.length, members));
    } else {
      records.push(groupRecord(id, fields, Number(values[2 * i + 1])));
    }
  });
  return records;
}

/** Reads live records of either kind. */
export function readRecords(
  redis: Redis,
  base: string,
  kind: EntityKind,
  ids: string[],
  withMembers = false,
): Promise<(UserRecord | GroupRecord)[]> {
  return kind === "user" ? readUsers(redis, base, ids) : readGroups(redis, base, ids, withMembers);
}

/** The record a write returns, built from the document sent and the script's answer. */
export function userFromWrite(id: string, doc: JsonObject, out: PutOutcome): UserRecord {
  return userRecord(id, writtenFields(doc, out), out.groups);
}

export function groupFromWrite(
  id: string,
  doc: JsonObject,
  out: PutOutcome,
  members?: string[],
): GroupRecord {
  return groupRecord(id, writtenFields(doc, out), out.memberCount, members);
}

function writtenFields(doc: JsonObject, out: PutOutcome): EntityFields {
  const gen = String(out.generation);
  return { doc: JSON.stringify(doc), created: out.created, modified: out.modified, gen, tomb: null };
}
