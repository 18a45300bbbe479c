import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type TestBridge, USER_SCHEMA, startTestBridge } from "../../helpers/bridge-harness.js";

import { RedisSyncStateStore } from "../../../src/sync/redis-sync-state-store.js";
import { TEST_REDIS_URL } from "../../helpers/redis-test-prefix.js";

const ENT = "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User";

/** Okta- and Entra-style provisioning over real HTTP, converging on the platform emulator. */
describe("provisioning flows reach the platform", () => {
  let h: TestBridge;
  beforeAll(async () => {
    h = await startTestBridge("flows", {
      sources: {
        okta: { tokens: ["okta-token"], groupPrefix: "okta-" },
        entra: {
          tokens: ["entra-token"],
          onDelete: "delete",
          attributes: {
            department: { from: `${ENT}:department`, type: "string" },
            country: { from: 'addresses[type eq "work"].country', type: "string" },
          },
        },
      },
    });
  });
  afterAll(async () => {
    await h?.close();
  });

  const group = (name: string) => h.emulator.state().groups.find((g) => g.displayName === name);

  it("Okta: create, deactivate (no-path PATCH), reactivate (PUT), group push, membership, delete", async () => {
    const okta = h.scim("okta");
    const ada = await okta.createUser("ada@okta.example", {
      externalId: "00u1",
      name: { givenName: "Ada", familyName: "Lovelace" },
      emails: [{ value: "ada@okta.example", type: "work", primary: true }],
    });
    const bob = await okta.createUser("bob@okta.example", { externalId: "00u2" });
    await h.waitForIdle();
    const pAda = h.platformUsers().get("ada@okta.example");
    expect(pAda).toMatchObject({ active: true, externalId: "00u1", name: { givenName: "Ada" } });

    // Okta deactivates with a PATCH without a path.
    const off = await okta.patchUser(ada.id, [{ op: "replace", value: { active: false } }]);
    expect(off.status).toBe(200);
    await h.waitForIdle();
    expect(h.platformUsers().get("ada@okta.example")?.active).toBe(false);

    // ... and may reactivate with a PUT of the whole user.
    const put = await okta.put(`/Users/${ada.id}`, {
      schemas: [USER_SCHEMA],
      userName: "ada@okta.example",
      externalId: "00u1",
      active: true,
      name: { givenName: "Ada", familyName: "King" },
      emails: [{ value: "ada@okta.example", type: "work", primary: true }],
    });
    expect(put.status).toBe(200);
    await h.waitForIdle();
    expect(h.platformUsers().get("ada@okta.example")).toMatchObject({
      active: true,
      name: { familyName: "King" },
    });

    // Group push: create with a member, then remove-and-add in one PATCH, then replace members with [].
    const eng = await okta.createGroup("Engineering", [ada.id]);
    await h.waitForIdle();
    expect(group("okta-Engineering")?.members).toEqual([pAda?.id]);
    const swap = await okta.patchGroup(eng.id, [
      { op: "remove", path: `members[value eq "${ada.id}"]` },
      { op: "add", path: "members", value: [{ value: bob.id }] },
    ]);
    expect(swap.status).toBeLessThan(300);
    await h.waitForIdle();
    expect(group("okta-Engineering")?.members).toEqual([h.platformUsers().get("bob@okta.example")?.id]);
    await okta.patchGroup(eng.id, [
      { op: "replace", path: "displayName", value: "Eng" },
      { op: "replace", path: "members", value: [] },
    ]);
    await h.waitForIdle();
    expect(group("okta-Eng")?.members).toEqual([]);
    expect(group("okta-Engineering")).toBeUndefined();

    // Delete: the user is deactivated (onDelete default), the group deleted, its members untouched.
    await okta.patchGroup(eng.id, [{ op: "add", path: "members", value: [{ value: ada.id }] }]);
    expect((await okta.deleteUser(bob.id)).status).toBe(204);
    await h.waitForIdle();
    expect(h.platformUsers().get("bob@okta.example")?.active).toBe(false);
    expect((await okta.deleteGroup(eng.id)).status).toBe(204);
    await h.waitForIdle();
    expect(group("okta-Eng")).toBeUndefined();
    expect(h.platformUsers().get("ada@okta.example")?.active).toBe(true);
    expect(h.emulator.violations()).toEqual([]);
  });

  it("Entra: capitalised ops, string booleans, enterprise attributes, member removal by value, delete", async () => {
    const entra = h.scim("entra");
    const carol = await entra.createUser("carol@entra.example", {
      externalId: "e-1",
      active: "True",
      displayName: "Carol",
      addresses: [{ type: "work", country: "DE" }],
      [ENT]: { department: "Finance", employeeNumber: "42" },
      schemas: [USER_SCHEMA, ENT],
    });
    const dave = await entra.createUser("dave@entra.example", { externalId: "e-2" });
    await h.waitForIdle();
    const pCarol = h.platformUsers().get("carol@entra.example");
    expect(pCarol).toMatchObject({ active: true, [ENT]: { department: "Finance", employeeNumber: "42" } });
    const values = () =>
      Object.fromEntries(
        h.emulator
          .state()
          .attributeValues.filter((v) => v.userId === pCarol?.id)
          .map((v) => [v.name, v.value]),
      );
    expect(values()).toEqual({ department: "Finance", country: "DE" });

    const res = await entra.patchUser(carol.id, [
      { op: "Replace", path: "active", value: "False" },
      { op: "Replace", path: `${ENT}:department`, value: "Legal" },
      { op: "Add", path: 'addresses[type eq "work"].country', value: "FR" },
    ]);
    expect(res.status).toBeLessThan(300);
    await h.waitForIdle();
    expect(h.platformUsers().get("carol@entra.example")).toMatchObject({
      active: false,
      [ENT]: { department: "Legal" },
    });
    expect(values()).toEqual({ department: "Legal", country: "FR" });

    const team = await entra.createGroup("Finance Team", [carol.id, dave.id]);
    await h.waitForIdle();
    expect(group("Finance Team")?.members).toHaveLength(2);
    await entra.patchGroup(team.id, [{ op: "Remove", path: "members", value: [{ value: dave.id }] }]);
    await h.waitForIdle();
    expect(group("Finance Team")?.members).toEqual([pCarol?.id]);

    // onDelete: delete removes the platform user; its group loses it.
    expect((await entra.deleteUser(carol.id)).status).toBe(204);
    await h.waitForIdle();
    expect(h.platformUsers().get("carol@entra.example")).toBeUndefined();
    expect(group("Finance Team")?.members).toEqual([]);
    expect(h.emulator.violations()).toEqual([]);
  });

  it("a resync of the converged directory makes zero write calls", async () => {
    await h.waitForIdle();
    const before = h.emulator.counters().writes;
    const reads = h.emulator.count("getUser") + h.emulator.count("getGroup");
    // What the resync fan-out does: flag every entity for a platform re-read, then mark it dirty.
    const redis = new Redis(TEST_REDIS_URL);
    try {
      const state = new RedisSyncStateStore(redis, h.prefix);
      const directory = h.bridge.directory;
      for (const source of ["okta", "entra"]) {
        for (const kind of ["user", "group"] as const) {
          for await (const ids of directory.scanIds(source, kind)) {
            const refs = ids.map((id) => ({ source, kind, id }));
            await state.requestResync(refs);
            for (const ref of refs) await directory.markDirty(ref);
          }
        }
      }
      await h.waitForIdle();
    } finally {
      await redis.quit();
    }
    expect(h.emulator.count("getUser") + h.emulator.count("getGroup")).toBeGreaterThan(reads); // it re-read
    expect(h.emulator.counters().writes).toBe(before);
  });
});
