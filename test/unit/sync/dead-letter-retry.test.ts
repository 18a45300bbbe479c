import { describe, expect, it } from "vitest";
import type { EntityRef } from "../../../src/scim/scim-types.js";
import {
  type DeadLetterRetryState,
  resyncTransientDeadLetters,
} from "../../../src/sync/dead-letter-retry.js";
import { isTransientFailureCode } from "../../../src/sync/sync-error.js";
import type { DeadLetter } from "../../../src/sync/sync-state-types.js";

/** The dead-letter list of one source, oldest first, as RedisSyncStateStore pages it. */
function letters(codes: string[]): DeadLetter[] {
  return codes.map((code, i) => ({
    ref: { source: "okta", kind: "user", id: `u${i}` },
    reason: "x",
    code,
    at: new Date(1_000 + i).toISOString(),
    attempts: 2,
  }));
}

/** The store's dead letters of `list`, read and marked as RedisSyncStateStore does. */
function store(list: DeadLetter[], generations: Map<string, number> = new Map()): DeadLetterRetryState {
  return {
    async entityGenerations(refs) {
      return refs.map((ref) => generations.get(ref.id) ?? 0);
    },
    // A copy of the source's order taken at the start, each page read as the letters are then.
    async *deadLetterPages(o: { source?: string; pageSize?: number } = {}) {
      const ids = list.filter((l) => l.ref.source === o.source).map((l) => l.ref.id);
      const pageSize = o.pageSize ?? 200;
      for (let offset = 0; offset < ids.length; offset += pageSize) {
        const page = ids
          .slice(offset, offset + pageSize)
          .map((id) => list.find((l) => l.ref.id === id && l.ref.source === o.source))
          .filter((letter) => letter !== undefined)
          .map((letter) => ({ letter, stored: JSON.stringify(letter) }));
        if (page.length > 0) yield page;
      }
    },
    async markDeadLetterAutoRetried(read, at, generation) {
      const i = list.findIndex(
        (l) => l.ref.id === read.letter.ref.id && l.ref.source === read.letter.ref.source,
      );
      if (i < 0 || JSON.stringify(list[i]) !== read.stored) return false;
      list[i] = { ...list[i]!, autoRetriedAt: at, autoRetriedGeneration: generation };
      return true;
    },
  };
}

describe("resyncTransientDeadLetters", () => {
  it("hands on the letters of transient failures only", async () => {
    const list = letters([
      "platform_server",
      "platform_conflict",
      "platform_timeout",
      "attribute_type_clash",
      "redis_unavailable",
      "platform_bulk_internal",
      "platform_unauthorized",
    ]);
    const got: EntityRef[] = [];
    const n = await resyncTransientDeadLetters(store(list), "okta", async (refs) => {
      got.push(...refs);
    });
    expect(n).toBe(4);
    expect(got.map((r) => r.id).sort()).toEqual(["u0", "u2", "u4", "u5"]);
  });

  it("reaches every letter while the letters of entities that synced go away during the reading", async () => {
    const list = letters(Array.from({ length: 23 }, () => "platform_network"));
    const got = new Set<string>();
    await resyncTransientDeadLetters(
      store(list),
      "okta",
      async (refs) => {
        for (const ref of refs) {
          got.add(ref.id);
          // The entity synced at once: its letter is removed.
          list.splice(
            list.findIndex((l) => l.ref.id === ref.id),
            1,
          );
        }
      },
      { pageSize: 5 },
    );
    expect(got.size).toBe(23);
  });

  it("other sources' letters are left alone", async () => {
    const list = [
      ...letters(["platform_server"]),
      { ...letters(["platform_server"])[0]!, ref: { source: "entra", kind: "user" as const, id: "e1" } },
    ];
    const got: EntityRef[] = [];
    await resyncTransientDeadLetters(store(list), "okta", async (refs) => {
      got.push(...refs);
    });
    expect(got).toEqual([{ source: "okta", kind: "user", id: "u0" }]);
  });

  it("hands a letter over once: not again, nor when the sync it went to wrote it again", async () => {
    const list = letters(["platform_server", "platform_timeout"]);
    const handOver = async () => {
      const got: string[] = [];
      await resyncTransientDeadLetters(store(list), "okta", async (refs) => {
        got.push(...refs.map((r) => r.id));
      });
      return got.sort();
    };
    expect(await handOver()).toEqual(["u0", "u1"]);
    expect(list.every((l) => l.autoRetriedAt !== undefined)).toBe(true);
    // The next run, before the syncs ran: nothing handed over again.
    expect(await handOver()).toEqual([]);
    // u0's sync failed again: its letter written again keeps the mark (the store's addDeadLetter).
    list[0] = { ...list[0]!, reason: "again", at: new Date(5_000).toISOString() };
    expect(await handOver()).toEqual([]);
    // A new failure after the entity synced (its letter gone, a new one without the mark): once more.
    list.push({ ...letters(["platform_network"])[0]!, ref: { source: "okta", kind: "user", id: "u9" } });
    expect(await handOver()).toEqual(["u9"]);
  });

  it("marks each letter with its entity's generation as read before the hand-over", async () => {
    const list = letters(["platform_server", "platform_timeout"]);
    const generations = new Map([
      ["u0", 4],
      ["u1", 7],
    ]);
    await resyncTransientDeadLetters(store(list, generations), "okta", async () => {
      // The IdP changes u0 while its sync is handed over: the mark keeps the generation read
      // before, so the letter of a sync that planned from the newer one does not keep the mark.
      generations.set("u0", 5);
    });
    expect(list.map((l) => l.autoRetriedGeneration)).toEqual([4, 7]);
  });

  it("marks, without requesting them again, the entities the run's repairs already requested", async () => {
    const list = letters(["platform_server", "platform_timeout", "platform_network"]);
    const requested: string[] = [];
    const n = await resyncTransientDeadLetters(
      store(list),
      "okta",
      async (refs) => {
        requested.push(...refs.map((r) => r.id));
      },
      // u1 showed drift: the run's repairs enqueued its sync already.
      { alreadyRequested: async (refs) => refs.map((r) => r.id === "u1") },
    );
    expect(requested.sort()).toEqual(["u0", "u2"]);
    expect(n).toBe(3);
    expect(list.every((l) => l.autoRetriedAt !== undefined)).toBe(true);
  });

  it("classifies codes", () => {
    for (const code of ["platform_server", "platform_rate_limited", "redis_unavailable"]) {
      expect(isTransientFailureCode(code), code).toBe(true);
    }
    for (const code of [
      // A bug or a Redis error reply, and a sync that never converged: left for an admin.
      "internal",
      "not_converging",
      "platform_forbidden",
      "platform_bad_request",
      "ownership_conflict",
      "platform_invalid_response",
    ]) {
      expect(isTransientFailureCode(code), code).toBe(false);
    }
  });
});
