/**
 * The steady-state load: an open-loop stream of SCIM PATCHes (change k is due at k / rate seconds,
 * sent whether or not earlier ones were answered) over the preloaded directory, and the model of
 * what the directory must hold afterwards. Of every 10 changes: 6 displayName changes carrying a
 * unique marker, 2 active-flag toggles, 2 membership changes (to two different groups).
 */
import type { Change } from "./correlate.js";
import type { BenchGroup, BenchUser } from "./population.js";
import { type HttpClient, nowMs, PATCH_SCHEMA } from "./scim-client.js";

export interface Directory {
  users: BenchUser[];
  groups: BenchGroup[];
  /** Bridge SCIM ids, by user / group index. */
  scimUserIds: string[];
  scimGroupIds: string[];
  /** Platform ids, by user / group index. */
  platformUserId(i: number): string;
  platformGroupId(g: number): string;
}

interface Planned {
  path: string;
  ops: unknown[];
  make(tSent: number, tAnswer: number): Change;
}

export class ChangeGenerator {
  readonly displayNames: string[];
  readonly members: Array<Set<number>>;

  constructor(private readonly dir: Directory) {
    this.displayNames = dir.users.map((_, i) => `Bench User ${i}`);
    this.members = dir.groups.map((g) => new Set(g.members));
  }

  /** Change k: updates the model and says what to send and how to describe it once answered. */
  plan(k: number): Planned {
    const { dir } = this;
    const users = dir.users.length;
    const slot = k % 10;
    const u = (k * 7919) % users;
    if (slot < 6) {
      const marker = `bmk${k}x`;
      this.displayNames[u] = `Bench User ${u} ${marker}`;
      const userId = dir.platformUserId(u);
      return {
        path: `Users/${dir.scimUserIds[u]}`,
        ops: [{ op: "replace", path: "displayName", value: this.displayNames[u] }],
        make: (tSent, tAnswer) => ({ kind: "profile", marker, userId, tSent, tAnswer }),
      };
    }
    if (slot < 8) {
      const user = dir.users[u]!;
      user.active = !user.active;
      const action = user.active ? "ACTIVATE" : "DEACTIVATE";
      const userId = dir.platformUserId(u);
      return {
        path: `Users/${dir.scimUserIds[u]}`,
        ops: [{ op: "replace", path: "active", value: user.active }],
        make: (tSent, tAnswer) => ({ kind: "lifecycle", userId, action, tSent, tAnswer }),
      };
    }
    // The two membership changes of each 10 go to different groups, so no group has two
    // changes in flight at once (their order at the bridge would be undefined).
    const g = (Math.floor(k / 10) * 2 + (slot - 8)) % dir.groups.length;
    const set = this.members[g]!;
    const remove = k % 20 >= 10 && set.size > 0;
    // Remove the longest-standing member; add a user that is not a member.
    let m = remove ? set.values().next().value! : (k * 104729) % users;
    if (!remove) while (set.has(m)) m = (m + 1) % users;
    if (remove) set.delete(m);
    else set.add(m);
    const op = remove ? "remove" : "add";
    const groupId = dir.platformGroupId(g);
    const userId = dir.platformUserId(m);
    return {
      path: `Groups/${dir.scimGroupIds[g]}`,
      ops: remove
        ? [{ op: "remove", path: `members[value eq "${dir.scimUserIds[m]}"]` }]
        : [{ op: "add", path: "members", value: [{ value: dir.scimUserIds[m] }] }],
      make: (tSent, tAnswer) => ({ kind: "membership", groupId, userId, op, tSent, tAnswer }),
    };
  }

  /** The groups as they must end up (members by user index). */
  expectedGroups(): BenchGroup[] {
    return this.dir.groups.map((g, i) => ({ ...g, members: [...this.members[i]!] }));
  }
}

export interface SendResult {
  changes: Change[];
  failed: number;
  /** Changes sent while the same entity had one in flight (should be 0). */
  overlaps: number;
  maxLagMs: number;
  tStart: number;
  tEnd: number;
}

/** Sends `rate × durationS` changes open-loop through `scim`; resolves once all are answered. */
export async function sendChanges(
  scim: HttpClient,
  source: string,
  generator: ChangeGenerator,
  rate: number,
  durationS: number,
): Promise<SendResult> {
  const changes: Change[] = [];
  const inflight = new Set<Promise<void>>();
  const busy = new Map<string, number>();
  let failed = 0;
  let overlaps = 0;
  let maxLagMs = 0;
  const fire = (k: number) => {
    const { path, ops, make } = generator.plan(k);
    if (busy.has(path)) overlaps++;
    busy.set(path, (busy.get(path) ?? 0) + 1);
    const p = scim
      .send("PATCH", `/scim/v2/${source}/${path}`, { schemas: [PATCH_SCHEMA], Operations: ops })
      .then(
        (a) => {
          if (a.status >= 200 && a.status < 300) changes.push(make(a.tSent, a.tAnswer));
          else failed++;
        },
        () => {
          failed++;
        },
      )
      .finally(() => {
        inflight.delete(p);
        const left = (busy.get(path) ?? 1) - 1;
        if (left > 0) busy.set(path, left);
        else busy.delete(path);
      });
    inflight.add(p);
  };
  const total = rate * durationS;
  const interval = 1000 / rate;
  const tStart = nowMs();
  for (let k = 0; k < total; ) {
    const now = nowMs();
    const due = Math.min(total, Math.floor((now - tStart) / interval) + 1);
    while (k < due) {
      maxLagMs = Math.max(maxLagMs, now - (tStart + k * interval));
      fire(k++);
    }
    await new Promise((r) => setTimeout(r, 1));
  }
  await Promise.all(inflight);
  return { changes, failed, overlaps, maxLagMs, tStart, tEnd: nowMs() };
}
