import type { EntityKind } from "../scim/scim-types.js";

/**
 * Key layout of the sync state (all under `${prefix}:sync:`, the directory's prefix and hash tag):
 *
 *   P:applied:<source>:<kind>     HASH id -> JSON of what was last applied (AppliedUser/Group/EmbedGroup)
 *   P:pid:<source>                HASH user id -> platform user id (workspace sources)
 *   P:emb:<source>                HASH user id -> JSON AppliedEmbedMember (embed-tenant sources)
 *   P:owner:<scope>               HASH platform key -> refKey (scope user | group | embed)
 *   P:status:<source>:<kind>      HASH id -> JSON EntitySyncStatus
 *   P:dead                        HASH refKey -> JSON DeadLetter
 *   P:dead:order                  ZSET refKey -> epoch ms (paging, oldest first)
 *   P:dead:order:<source>         ZSET refKey -> epoch ms (paging by source)
 *   P:dead:walk:<uuid>            ZSET a copy of a dead order, walked by one reader (deadLetterPages);
 *                                 deleted when the walk ends, expires in an hour if it never does
 *   P:resync                      SET  refKeys whose next sync re-reads the platform
 *   P:rl                          HASH refKey -> rate-limited loops of its current sync
 *   P:lc:pending                  HASH platform user id -> JSON LifecycleEntry
 *   P:lc:order                    ZSET platform user id -> epoch ms queued
 *   P:check                       ZSET refKey -> epoch ms when its platform object is read again
 *                                 (a write of its sync got no answer and may still land late)
 *   P:writing                     ZSET refKey|write id -> epoch ms when a check would be due: marked
 *                                 before a write is sent, dropped once it is over (a process that
 *                                 dies with the write on the wire leaves it: it becomes a check)
 *   P:mgr:left:<source>           HASH user id -> bridge id of the manager it was synced without
 *                                 (the manager's own sync is a dead letter)
 *   P:mgr:deps:<source>:<manager> SET  user ids synced without this manager: synced again once it
 *                                 gets a platform user (the reverse of mgr:left)
 */
export type OwnerScope = "user" | "group" | "embed";

/** The owner key of an embed group (scope "embed"): its tenant and platform id. */
export function embedKey(tenant: string, id: string): string {
  return `${tenant}/${id}`;
}

export function syncBase(prefix: string): string {
  return `${prefix}:sync`;
}

export const syncKeys = {
  applied: (p: string, source: string, kind: EntityKind) => `${syncBase(p)}:applied:${source}:${kind}`,
  pid: (p: string, source: string) => `${syncBase(p)}:pid:${source}`,
  emb: (p: string, source: string) => `${syncBase(p)}:emb:${source}`,
  owner: (p: string, scope: OwnerScope) => `${syncBase(p)}:owner:${scope}`,
  status: (p: string, source: string, kind: EntityKind) => `${syncBase(p)}:status:${source}:${kind}`,
  dead: (p: string) => `${syncBase(p)}:dead`,
  deadOrder: (p: string, source?: string) =>
    source === undefined ? `${syncBase(p)}:dead:order` : `${syncBase(p)}:dead:order:${source}`,
  deadWalk: (p: string, id: string) => `${syncBase(p)}:dead:walk:${id}`,
  resync: (p: string) => `${syncBase(p)}:resync`,
  rateLimitLoops: (p: string) => `${syncBase(p)}:rl`,
  lcPending: (p: string) => `${syncBase(p)}:lc:pending`,
  lcOrder: (p: string) => `${syncBase(p)}:lc:order`,
  check: (p: string) => `${syncBase(p)}:check`,
  writing: (p: string) => `${syncBase(p)}:writing`,
  managerLeftOut: (p: string, source: string) => `${syncBase(p)}:mgr:left:${source}`,
  managerDependents: (p: string, source: string, managerId: string) =>
    `${syncBase(p)}:mgr:deps:${source}:${managerId}`,
};
