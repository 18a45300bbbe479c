/**
 * The one manager lookup of the sync and of reconciliation (src/sync/manager-lookup.ts): what is
 * read, in which order, and that the user's last translation is read only for a value no longer a
 * user of the source. The reads are stand-ins (no I/O); the decisions are managerLookupOf's.
 */
import { describe, expect, it } from "vitest";
import type { ManagerTranslation } from "../../../src/mapping/user-profile.js";
import { lookUpManager } from "../../../src/sync/manager-lookup.js";

const ENT = "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User";
const employee = (manager?: string) => ({
  userName: "emp@contoso.com",
  ...(manager ? { [ENT]: { manager: { value: manager } } } : {}),
});

/** Users of source "okta": by id, their platform id (null: none yet) or "tombstone". */
function readsOf(users: Record<string, string | null | "tombstone">) {
  const read: string[] = [];
  return {
    read,
    reads: {
      state: {
        getUserPlatformIds: async (source: string, ids: string[]) => {
          read.push(`platformIds ${source} ${ids.join(",")}`);
          return ids.map((id) => {
            const user = users[id];
            return user === "tombstone" ? null : (user ?? null);
          });
        },
      },
      directory: {
        snapshotUser: async (source: string, id: string) => {
          read.push(`snapshot ${source} ${id}`);
          const user = users[id];
          if (user === undefined) return null;
          const ref = { source, kind: "user" as const, id };
          return user === "tombstone"
            ? { ref, desired: null, generation: 2 }
            : { ref, desired: { resource: { id } } as never, generation: 1 };
        },
      },
    },
  };
}

const last = (translation: ManagerTranslation | undefined, read: string[]) => async () => {
  read.push("last translation");
  return translation;
};

describe("lookUpManager", () => {
  it("no manager: nothing is read", async () => {
    const { reads, read } = readsOf({});
    expect(await lookUpManager(reads, "okta", employee(), last(undefined, read))).toBeUndefined();
    expect(read).toEqual([]);
  });

  it("a user of the source with a platform id: that id", async () => {
    const { reads, read } = readsOf({ boss: "plat-boss" });
    expect(await lookUpManager(reads, "okta", employee("boss"), last(undefined, read))).toEqual({
      value: "boss",
      sourceUser: true,
      platformId: "plat-boss",
    });
    expect(read).toEqual(["platformIds okta boss"]);
  });

  it("a user of the source without a platform id yet: null (the sync waits for it)", async () => {
    const { reads, read } = readsOf({ boss: null });
    expect(await lookUpManager(reads, "okta", employee("boss"), last(undefined, read))).toEqual({
      value: "boss",
      sourceUser: true,
      platformId: null,
    });
    expect(read).toEqual(["platformIds okta boss", "snapshot okta boss"]);
  });

  it("a value no longer a user of the source (deleted, or purged): the last translation is kept", async () => {
    const translation = { from: "boss", to: "plat-boss" };
    const gone: Array<Record<string, "tombstone">> = [{ boss: "tombstone" }, {}];
    for (const users of gone) {
      const { reads, read } = readsOf(users);
      expect(await lookUpManager(reads, "okta", employee("boss"), last(translation, read))).toEqual({
        value: "boss",
        sourceUser: false,
        kept: "plat-boss",
      });
      expect(read).toEqual(["platformIds okta boss", "snapshot okta boss", "last translation"]);
    }
  });

  it("another value (an employee number): forwarded as it is", async () => {
    const { reads, read } = readsOf({});
    expect(await lookUpManager(reads, "okta", employee("E-1042"), last(undefined, read))).toEqual({
      value: "E-1042",
      sourceUser: false,
    });
  });
});
