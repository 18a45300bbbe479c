import { describe, expect, it } from "vitest";
import type { EntityRef } from "../../../src/scim/scim-types.js";
import { resyncTransientDeadLetters } from "../../../src/sync/dead-letter-retry.js";
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

function store(list: DeadLetter[]) {
  return {
    async listDeadLetters(o: { source?: string; offset: number; limit: number }) {
      const mine = list.filter((l) => l.ref.source === o.source);
      return { total: mine.length, items: o.limit <= 0 ? [] : mine.slice(o.offset, o.offset + o.limit) };
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
      5,
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

  it("classifies codes", () => {
    for (const code of ["platform_server", "platform_rate_limited", "internal", "not_converging"]) {
      expect(isTransientFailureCode(code), code).toBe(true);
    }
    for (const code of [
      "platform_forbidden",
      "platform_bad_request",
      "ownership_conflict",
      "platform_invalid_response",
    ]) {
      expect(isTransientFailureCode(code), code).toBe(false);
    }
  });
});
