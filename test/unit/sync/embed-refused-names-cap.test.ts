import { describe, expect, it } from "vitest";
import { PlatformError } from "../../../src/platform/platform-error.js";
import type { EntityRef } from "../../../src/scim/scim-types.js";
import { embedRefusedNames, throwRefusals } from "../../../src/sync/group-refusals.js";
import type { SyncContext } from "../../../src/sync/sync-context.js";

/**
 * embedRefusedNames: the dead letter names at most 20 refused members (NAMED_MEMBERS), so no more
 * than that are looked up (two Redis calls each); the letter still counts every refused member.
 */

const ref: EntityRef = { source: "portal", kind: "group", id: "g1" };
const refusal = new PlatformError("removeEmbedGroupMembers: 400 refused", {
  operation: "removeEmbedGroupMembers",
  failure: "bad_request",
  transient: false,
  httpStatus: 400,
});

function fakeContext() {
  const looked: string[] = [];
  const ctx = {
    directory: {
      async findUserId(_source: string, by: { externalId: string }) {
        looked.push(by.externalId);
        return `user-${by.externalId}`;
      },
    },
    state: {
      async getEmbedMembers(_source: string, ids: string[]) {
        return ids.map((id) => ({ externalId: id.slice("user-".length) }));
      },
    },
    logger: { error() {}, warn() {}, info() {} },
  } as unknown as SyncContext;
  return { ctx, looked };
}

describe("embedRefusedNames", () => {
  it("25 refused removals of members the group no longer has: 20 looked up and named, 25 counted", async () => {
    const { ctx, looked } = fakeContext();
    const removed = Array.from({ length: 25 }, (_, i) => `ext${i}`);
    const refused = { added: new Set<string>(), removed: new Set(removed), error: refusal };
    const names = embedRefusedNames(ctx, ref, [], []);

    const err = await throwRefusals(ctx, ref, refused, names).then(
      () => undefined,
      (e: unknown) => e as Error,
    );

    expect(looked).toEqual(removed.slice(0, 20));
    const ids = removed.slice(0, 20).map((e) => `user-${e}`);
    expect(err?.message).toContain("remove 25 member(s) from the group");
    expect(err?.message).toContain(`refused members (the bridge's user ids): ${ids.join(", ")} and 5 more`);
  });

  it("members of the group are named without a look-up; fewer than 20 refused: every one named", async () => {
    const { ctx, looked } = fakeContext();
    const refused = { added: new Set(["ext-a"]), removed: new Set(["ext-b"]), error: refusal };
    const named = await embedRefusedNames(ctx, ref, ["member-a"], ["ext-a"])(refused);
    expect(named).toEqual({ users: ["member-a", "user-ext-b"], unknown: [], more: 0 });
    expect(looked).toEqual(["ext-b"]);
  });
});
