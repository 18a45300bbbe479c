import { afterEach, describe, expect, it } from "vitest";
import { type JobsHarness, startJobsHarness } from "./jobs-harness.js";

const ENT = "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User";

describe("sync pipeline (directory -> queue -> worker -> emulator)", () => {
  let h: JobsHarness | undefined;
  afterEach(async () => {
    await h?.close();
    h = undefined;
  });

  it("creates, updates, deactivates, reactivates and deletes users, and syncs groups", async () => {
    h = await startJobsHarness("pipeline", {
      sources: {
        okta: {
          tokens: ["t"],
          groupPrefix: "okta-",
          attributes: {
            department: { from: `${ENT}:department`, type: "string" },
            country: { from: 'addresses[type eq "work"].country', type: "string" },
          },
        },
      },
    });
    const d = h.directory;
    const ada = await d.createUser(
      "okta",
      h.user("ada@example.com", {
        name: { givenName: "Ada", familyName: "Lovelace" },
        addresses: [{ type: "work", country: "UK" }],
        [ENT]: { department: "R&D" },
      }),
    );
    const bob = await d.createUser("okta", h.user("bob@example.com"));
    const eng = await d.createGroup("okta", h.group("Engineering"), [ada.resource.id, bob.resource.id]);
    await h.waitForIdle();

    const users = h.platformUsers();
    const pAda = users.get("ada@example.com");
    expect(pAda).toMatchObject({ active: true, name: { givenName: "Ada", familyName: "Lovelace" } });
    const group = h.platformGroups().get("okta-Engineering");
    expect(group?.members.sort()).toEqual([pAda?.id, users.get("bob@example.com")?.id].sort());
    const values = h.emulator.state().attributeValues.filter((v) => v.userId === pAda?.id);
    expect(Object.fromEntries(values.map((v) => [v.name, v.value]))).toEqual({
      department: "R&D",
      country: "UK",
    });
    expect(h.emulator.violations()).toEqual([]);

    // Profile change: a PATCH of what changed only; the country is cleared at the source.
    const patchesBefore = h.emulator.count("patchUser");
    await d.updateUser("okta", ada.resource.id, (cur) => {
      const { id: _id, ...rest } = cur.resource;
      return { ...rest, displayName: "Countess", addresses: [] };
    });
    await h.waitForIdle();
    expect(h.emulator.count("patchUser")).toBe(patchesBefore + 1);
    expect(h.platformUsers().get("ada@example.com")?.["displayName"]).toBe("Countess");
    const cleared = h.emulator
      .state()
      .attributeValues.filter((v) => v.userId === pAda?.id && v.name === "country");
    expect(cleared.every((v) => v.value === null)).toBe(true);

    // Deactivate and reactivate: through the bulk endpoint.
    await d.updateUser("okta", bob.resource.id, (cur) => ({ ...cur.resource, active: false }));
    await h.waitForIdle();
    expect(h.platformUsers().get("bob@example.com")?.active).toBe(false);
    // A deactivated user stays a member of its workspace groups.
    expect(h.platformGroups().get("okta-Engineering")?.members).toContain(users.get("bob@example.com")?.id);
    await d.updateUser("okta", bob.resource.id, (cur) => ({ ...cur.resource, active: true }));
    await h.waitForIdle();
    expect(h.platformUsers().get("bob@example.com")?.active).toBe(true);
    expect(h.emulator.count("bulkUsers")).toBe(2);

    // Rename the group, then delete a user: it leaves the group and is deactivated (onDelete default).
    await d.updateGroup("okta", eng.resource.id, (cur) => ({
      resource: { ...cur.resource, displayName: "Eng" },
    }));
    await d.deleteUser("okta", bob.resource.id);
    await h.waitForIdle();
    expect(h.platformUsers().get("bob@example.com")?.active).toBe(false);
    expect(h.platformGroups().get("okta-Eng")?.members).toEqual([pAda?.id]);
    expect(await h.state.getApplied({ source: "okta", kind: "user", id: bob.resource.id })).toBeNull();

    // Deleting the group leaves its members alone.
    await d.deleteGroup("okta", eng.resource.id);
    await h.waitForIdle();
    expect(h.platformGroups().size).toBe(0);
    expect(h.platformUsers().get("ada@example.com")?.active).toBe(true);
    expect(h.emulator.violations()).toEqual([]);
    expect(await h.directory.countDirty()).toBe(0);
  });

  it("adopts a platform user with the same userName instead of looping on 409", async () => {
    h = await startJobsHarness("adopt");
    h.emulator.seed({ users: [{ userName: "Carol@Example.com", active: false }] });
    const carol = await h.directory.createUser("okta", h.user("carol@example.com", { displayName: "Carol" }));
    await h.waitForIdle();
    const users = h.emulator.state().users;
    expect(users).toHaveLength(1);
    expect(users[0]).toMatchObject({ active: true, displayName: "Carol" });
    const status = await h.state.getStatus({ source: "okta", kind: "user", id: carol.resource.id });
    expect(status).toMatchObject({ state: "synced", platformId: users[0]?.id });
    expect(h.emulator.count("createUser")).toBe(1);
  });

  it("a sync of converged entities makes zero write calls (idempotence)", async () => {
    h = await startJobsHarness("idem");
    const u = await h.directory.createUser("okta", h.user("dan@example.com", { active: false }));
    const g = await h.directory.createGroup("okta", h.group("Ops"), [u.resource.id]);
    await h.waitForIdle();
    const writes = h.writes();
    const refs = [
      { source: "okta", kind: "user" as const, id: u.resource.id },
      { source: "okta", kind: "group" as const, id: g.resource.id },
    ];
    await h.state.requestResync(refs);
    for (const ref of refs) await h.directory.markDirty(ref);
    await h.waitForIdle();
    expect(h.writes()).toBe(writes);
    expect(h.emulator.count("getUser")).toBeGreaterThan(0); // it did re-read the platform
    // And a plain sync (trusting the applied record) writes nothing either.
    for (const ref of refs) await h.directory.markDirty(ref);
    await h.waitForIdle();
    expect(h.writes()).toBe(writes);
    expect(await h.state.isResyncRequested({ source: "okta", kind: "user", id: u.resource.id })).toBe(false);
  });

  it("resync repairs a change made behind the bridge's back", async () => {
    h = await startJobsHarness("drift");
    const u = await h.directory.createUser("okta", h.user("eve@example.com"));
    await h.waitForIdle();
    const pid = h.platformUsers().get("eve@example.com")?.id as string;
    h.emulator.drift({ action: "setUserActive", userId: pid, active: false });
    const ref = { source: "okta", kind: "user" as const, id: u.resource.id };
    await h.directory.markDirty(ref);
    await h.waitForIdle();
    expect(h.platformUsers().get("eve@example.com")?.active).toBe(false); // trusted the applied record
    await h.state.requestResync([ref]);
    await h.directory.markDirty(ref);
    await h.waitForIdle();
    expect(h.platformUsers().get("eve@example.com")?.active).toBe(true);
  });

  it("creates a user again when it was deleted on the platform behind the bridge's back", async () => {
    h = await startJobsHarness("vanished", {
      sources: { okta: { tokens: ["t"], attributes: { title: { from: "title", type: "string" } } } },
    });
    const u = await h.directory.createUser("okta", h.user("gone@example.com", { title: "Eng" }));
    await h.waitForIdle();
    const first = h.platformUsers().get("gone@example.com")?.id as string;
    await h.platform.deleteUser(first);
    await h.directory.updateUser("okta", u.resource.id, (c) => ({ ...c.resource, title: "Lead" }));
    await h.waitForIdle();
    const again = h.platformUsers().get("gone@example.com");
    expect(again?.id).toBeDefined();
    expect(again?.id).not.toBe(first);
    const values = h.emulator.state().attributeValues.filter((v) => v.userId === again?.id);
    expect(values.map((v) => v.value)).toEqual(["Lead"]);
    expect(await h.state.getUserPlatformIds("okta", [u.resource.id])).toEqual([again?.id]);
  });
});
