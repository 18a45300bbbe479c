/**
 * Steady-state correlation (pure): each SCIM change is matched to the first platform write that
 * carries it, from the emulator host's recorded writes (arrival and answer times, bodies).
 *
 * - profile: a unique marker in the user's displayName; the first write whose body contains it.
 * - lifecycle: the first `POST /api/v1/users/bulk` with that action listing the user's platform id.
 * - membership: the first `PATCH /api/scim/v2/Groups/<group>` with an add (value list) or remove
 *   (`members[value eq "<id>"]` path, or a value list) naming the user's platform id.
 *
 * A write counts only when it arrived after the SCIM request was sent (it may arrive before the
 * SCIM answer reached the client: the bridge enqueues before it answers, so a latency can be
 * slightly negative) and was answered with a 2xx.
 *
 * The sync is level-triggered: when a later change to the same thing (a user's displayName, a
 * user's active flag, one user's membership of one group) lands before the first one was written,
 * only the newer value is written. A displayName change is then "superseded": its time is taken to
 * the first write of a later change to the same user's displayName (the platform then holds a
 * state at least as new). A toggle (active flag, one membership) undone by a later change before
 * it was written needs no write at all, nor does the change that undoes it: "cancelled".
 */

export type Change =
  | { kind: "profile"; marker: string; userId: string; tSent: number; tAnswer: number }
  | { kind: "lifecycle"; userId: string; action: "ACTIVATE" | "DEACTIVATE"; tSent: number; tAnswer: number }
  | {
      kind: "membership";
      groupId: string;
      userId: string;
      op: "add" | "remove";
      tSent: number;
      tAnswer: number;
    };

export interface Write {
  t: number;
  tDone: number;
  status: number;
  method: string;
  path: string;
  operation: string;
  body: string;
}

export interface Match {
  change: Change;
  write?: { t: number; tDone: number };
  /** direct: a write carries this change; superseded/cancelled: see above; missing: none of these. */
  how: "direct" | "superseded" | "cancelled" | "missing";
}

type Seen = Array<{ t: number; tDone: number }>;

function push(index: Map<string, Seen>, key: string, w: Write): void {
  const list = index.get(key) ?? [];
  list.push({ t: w.t, tDone: w.tDone });
  index.set(key, list);
}

const MEMBER_FILTER = /^members\[value eq "([^"]+)"\]$/;

/** Indexes the writes by what they carry. */
export function indexWrites(writes: Write[]): Map<string, Seen> {
  const index = new Map<string, Seen>();
  const ordered = [...writes].filter((w) => w.status >= 200 && w.status < 300).sort((a, b) => a.t - b.t);
  for (const w of ordered) {
    for (const m of w.body.matchAll(/bmk\d+x/g)) push(index, `marker|${m[0]}`, w);
    if (w.operation === "bulkUsers") {
      const body = JSON.parse(w.body) as { action: string; userIds: string[] };
      for (const id of body.userIds) push(index, `bulk|${body.action}|${id}`, w);
    }
    if (w.operation === "patchGroup") {
      const groupId = decodeURIComponent(w.path.split("/").pop() ?? "");
      const body = JSON.parse(w.body) as {
        Operations?: Array<{ op: string; path?: string; value?: unknown }>;
      };
      for (const op of body.Operations ?? []) {
        const kind = op.op.toLowerCase();
        const filtered = op.path ? MEMBER_FILTER.exec(op.path)?.[1] : undefined;
        if (filtered) push(index, `member|${groupId}|${kind}|${filtered}`, w);
        if (Array.isArray(op.value)) {
          for (const v of op.value as Array<{ value?: string }>) {
            if (v?.value) push(index, `member|${groupId}|${kind}|${v.value}`, w);
          }
        }
      }
    }
  }
  return index;
}

export function changeKey(c: Change): string {
  switch (c.kind) {
    case "profile":
      return `marker|${c.marker}`;
    case "lifecycle":
      return `bulk|${c.action}|${c.userId}`;
    case "membership":
      return `member|${c.groupId}|${c.op}|${c.userId}`;
  }
}

/** What a change changes: later changes with the same thing supersede it. */
export function thingOf(c: Change): string {
  switch (c.kind) {
    case "profile":
      return `displayName|${c.userId}`;
    case "lifecycle":
      return `active|${c.userId}`;
    case "membership":
      return `member|${c.groupId}|${c.userId}`;
  }
}

/**
 * Changes grouped by a key, each list in the order the changes were sent (indexes into `changes`).
 */
function groupBy(changes: Change[], key: (c: Change) => string): Map<string, number[]> {
  const order = changes.map((_, i) => i).sort((a, b) => changes[a]!.tSent - changes[b]!.tSent);
  const groups = new Map<string, number[]>();
  for (const i of order) {
    const k = key(changes[i]!);
    const list = groups.get(k) ?? [];
    list.push(i);
    groups.set(k, list);
  }
  return groups;
}

export function correlate(changes: Change[], writes: Write[]): Match[] {
  const index = indexWrites(writes);
  const sameKey = groupBy(changes, changeKey);
  const sameThing = groupBy(changes, thingOf);
  // A write carries the latest change with its key sent before it: a change is carried directly
  // only by a write that arrived before the next change with the same key was sent.
  const direct = changes.map((change, i) => {
    const write = (index.get(changeKey(change)) ?? []).find((w) => w.t >= change.tSent);
    if (!write) return undefined;
    const list = sameKey.get(changeKey(change))!;
    const next = list[list.indexOf(i) + 1];
    return next !== undefined && changes[next]!.tSent <= write.t ? undefined : write;
  });
  return changes.map((change, i): Match => {
    const write = direct[i];
    if (write) return { change, write, how: "direct" };
    const thing = sameThing.get(thingOf(change))!;
    const at = thing.indexOf(i);
    const later = thing.slice(at + 1);
    if (change.kind !== "profile") {
      // A toggle undone before it was written needs no write; so does the one that undoes it.
      const previous = thing[at - 1];
      if (later.length > 0 || (previous !== undefined && !direct[previous]))
        return { change, how: "cancelled" };
      return { change, how: "missing" };
    }
    const carried = later
      .map((j) => direct[j])
      .filter((w): w is { t: number; tDone: number } => w !== undefined && w.t >= change.tSent)
      .sort((a, b) => a.t - b.t)[0];
    return carried ? { change, write: carried, how: "superseded" } : { change, how: "missing" };
  });
}
