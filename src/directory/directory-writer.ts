import type { Redis } from "ioredis";
import { BadRequestError, ConflictError, NotFoundError, PreconditionFailedError } from "../errors.js";
import { type EntityKind, type EntityRef, refKey } from "../scim/scim-types.js";
import type { StoredDoc } from "./directory-codec.js";
import { deletionBase, dirtyKey, entityKey, isStoreId } from "./directory-keys.js";
import { DELETE_ENTITY, MARK_CLEAN, PUT_ENTITY, PURGE_TOMBSTONE } from "./directory-scripts.js";
import type { MembershipChange, WriteGuard } from "./directory-types.js";

/**
 * The write side of the directory: each call is one Lua script (one round trip), registered on the
 * caller's ioredis client with defineCommand (EVALSHA with a fallback to EVAL on NOSCRIPT).
 */

type ScriptArg = string | number;

interface DirectoryCommands {
  scimDirectoryPut(key: string, ...args: ScriptArg[]): Promise<unknown[]>;
  scimDirectoryDelete(key: string, ...args: ScriptArg[]): Promise<unknown[]>;
  scimDirectoryMarkClean(key: string, ...args: ScriptArg[]): Promise<number>;
  scimDirectoryPurge(key: string, ...args: ScriptArg[]): Promise<number>;
}

export interface PutOutcome {
  /** The entity changed since `expected` was read (only when an expected generation was given). */
  raced: boolean;
  /**
   * Nothing was written: the entity was still at `sameAt` and the membership change left its
   * members as they were. The other fields describe the entity as it stands.
   */
  unchanged: boolean;
  generation: number;
  created: string;
  modified: string;
  /** Groups: the member count after the write. */
  memberCount: number;
  /** Users: the group ids the user is a member of after the write. */
  groups: string[];
}

export interface DeleteOutcome {
  raced: boolean;
  generation: number;
  /** Groups whose membership lost the deleted user (their generation was bumped, they are dirty). */
  touchedGroups: string[];
}

export interface PutRequest {
  kind: EntityKind;
  source: string;
  base: string;
  id: string;
  mode: "create" | "update";
  /** The generation the write expects ("" = whatever is current). */
  expected: string;
  /**
   * The generation at which the caller found the stored document equal to `stored.doc` (omitted
   * when it differs, or was not compared): at that generation, a write whose membership change
   * keeps the members as they are changes nothing and is not applied (PutOutcome.unchanged).
   */
  sameAt?: number;
  stored: StoredDoc;
  members?: MembershipChange;
  guard?: WriteGuard;
}

function guardArg(guard: WriteGuard | undefined): string {
  return guard ? JSON.stringify(guard) : "";
}

/** memberMode, the guard (ARGV[17]), then the membership change. */
function membershipArgs(change: MembershipChange | undefined, guard: string): ScriptArg[] {
  if (!change) return ["none", guard, 0, 0, 0, 0];
  const replace = change.replace ? [...new Set(change.replace)] : [];
  const add = [...new Set(change.add ?? [])];
  const remove = [...new Set(change.remove ?? [])];
  return [
    "change",
    guard,
    change.replace ? 1 : 0,
    replace.length,
    add.length,
    remove.length,
    ...replace,
    ...add,
    ...remove,
  ];
}

function conflictMessage(kind: EntityKind, attribute: unknown): string {
  if (attribute === "externalId") return `A ${kind} with this externalId already exists`;
  return kind === "user"
    ? "A user with this userName already exists"
    : "A group with this displayName already exists";
}

function notFound(kind: EntityKind, id: string): NotFoundError {
  return new NotFoundError(`${kind === "user" ? "User" : "Group"} ${id} not found`);
}

export class DirectoryWriter {
  private readonly commands: DirectoryCommands;

  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
  ) {
    redis.defineCommand("scimDirectoryPut", { numberOfKeys: 1, lua: PUT_ENTITY });
    redis.defineCommand("scimDirectoryDelete", { numberOfKeys: 1, lua: DELETE_ENTITY });
    redis.defineCommand("scimDirectoryMarkClean", { numberOfKeys: 1, lua: MARK_CLEAN });
    redis.defineCommand("scimDirectoryPurge", { numberOfKeys: 1, lua: PURGE_TOMBSTONE });
    this.commands = redis as unknown as DirectoryCommands;
  }

  /** Create or update; maps the script's refusals to AppErrors (404, 409, 400 invalidValue). */
  async put(request: PutRequest): Promise<PutOutcome> {
    const { kind, source, base, id, stored } = request;
    if (!isStoreId(id)) throw notFound(kind, id);
    const now = new Date();
    const reply = await this.commands.scimDirectoryPut(
      entityKey(base, kind, id),
      base,
      kind,
      id,
      request.mode,
      request.expected,
      JSON.stringify(stored.doc),
      stored.nameKey,
      stored.externalId,
      JSON.stringify(stored.emails),
      now.toISOString(),
      now.getTime(),
      dirtyKey(this.prefix),
      refKey({ source, kind, id }),
      request.sameAt === undefined ? "" : String(request.sameAt),
      stored.legacyNameKey ?? "",
      ...membershipArgs(request.members, guardArg(request.guard)),
    );
    const status = reply[0];
    if (status === "guard") throw new PreconditionFailedError();
    if (status === "notfound")
      throw new NotFoundError(`${kind === "user" ? "User" : "Group"} ${id} not found`);
    if (status === "conflict") throw new ConflictError(conflictMessage(kind, reply[1]), "uniqueness");
    if (status === "unknown") {
      const unknown = reply[1] as string[];
      // A group's id among them is a nested group, which the platform's groups cannot hold.
      throw new BadRequestError(
        `Unknown member ids: ${unknown.join(", ")} (a member is a user of this source, by its id; ` +
          "groups as members are not supported)",
        "invalidValue",
        { unknown },
      );
    }
    if (status === "exists") throw new ConflictError(`${kind} id collision`, "uniqueness");
    if (status === "version") {
      return {
        raced: true,
        unchanged: false,
        generation: Number(reply[1]),
        created: "",
        modified: "",
        memberCount: 0,
        groups: [],
      };
    }
    return {
      raced: false,
      unchanged: status === "unchanged",
      generation: Number(reply[1]),
      created: String(reply[2]),
      modified: String(reply[3]),
      memberCount: Number(reply[4]),
      groups: [...((reply[5] as string[] | undefined) ?? [])].sort(),
    };
  }

  /**
   * Delete, leaving a tombstone; 404 when unknown or already deleted. A user's deletion is recorded
   * (dated `deletion.at`, kept `deletion.ttlSeconds`; directory-keys.ts) in the same script.
   */
  async remove(
    kind: EntityKind,
    source: string,
    base: string,
    id: string,
    expected: string,
    deletion: { at?: number; ttlSeconds: number },
    guard?: WriteGuard,
  ): Promise<DeleteOutcome> {
    if (!isStoreId(id)) throw notFound(kind, id);
    const now = new Date();
    const reply = await this.commands.scimDirectoryDelete(
      entityKey(base, kind, id),
      base,
      kind,
      id,
      expected,
      now.toISOString(),
      now.getTime(),
      dirtyKey(this.prefix),
      refKey({ source, kind, id }),
      refKey({ source, kind: "group", id: "" }),
      Math.floor(deletion.at ?? now.getTime()),
      deletion.ttlSeconds,
      deletionBase(this.prefix, source),
      guardArg(guard),
    );
    if (reply[0] === "guard") throw new PreconditionFailedError();
    if (reply[0] === "notfound")
      throw new NotFoundError(`${kind === "user" ? "User" : "Group"} ${id} not found`);
    if (reply[0] === "version") return { raced: true, generation: Number(reply[1]), touchedGroups: [] };
    return {
      raced: false,
      generation: Number(reply[1]),
      touchedGroups: (reply[2] as string[] | undefined) ?? [],
    };
  }

  async markClean(ref: EntityRef, base: string, generation: number): Promise<boolean> {
    if (!isStoreId(ref.id)) return (await this.redis.zrem(dirtyKey(this.prefix), refKey(ref))) === 1;
    const removed = await this.commands.scimDirectoryMarkClean(
      entityKey(base, ref.kind, ref.id),
      dirtyKey(this.prefix),
      refKey(ref),
      String(generation),
    );
    return Number(removed) === 1;
  }

  async purge(
    ref: EntityRef,
    base: string,
    extraKey: string,
    generation: number,
    syncAgain = false,
  ): Promise<boolean> {
    if (!isStoreId(ref.id)) return false;
    const purged = await this.commands.scimDirectoryPurge(
      entityKey(base, ref.kind, ref.id),
      dirtyKey(this.prefix),
      refKey(ref),
      String(generation),
      extraKey,
      syncAgain ? String(Date.now()) : "",
    );
    return Number(purged) === 1;
  }
}
