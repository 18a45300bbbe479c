import { afterEach, describe, expect, it } from "vitest";
import type { EntityRef } from "../../src/scim/scim-types.js";
import { type JobsHarness, startJobsHarness } from "../integration/jobs/jobs-harness.js";

const ENT = "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User";

async function deadSyncs(h: JobsHarness): Promise<number> {
  const metric = await h.registry.getSingleMetric("sync_jobs_total")?.get();
  return (
    metric?.values.find((v) => v.labels["kind"] === "user" && v.labels["outcome"] === "dead")?.value ?? 0
  );
}

/**
 * Nobody is left in: a deactivation at the identity provider reaches the platform even when
 * another write of the same user's sync is refused for good (a userName another source holds, an
 * attribute of another type). The refusal stays visible: a dead letter, and the entity's status
 * stays `dead` after the deactivation is applied, never `synced`.
 */
describe("a deactivation is not held back by a refused write", () => {
  let h: JobsHarness | undefined;
  afterEach(async () => {
    await h?.close();
    h = undefined;
  });

  it("a rename the platform refuses (409) does not keep the user active", async () => {
    h = await startJobsHarness("deprov-rename", {
      sources: { okta: { tokens: ["a"] }, entra: { tokens: ["b"] } },
    });
    await h.directory.createUser("entra", h.user("taken@example.com"));
    const u = await h.directory.createUser("okta", h.user("leaver@example.com"));
    await h.waitForIdle();
    const ref: EntityRef = { source: "okta", kind: "user", id: u.resource.id };
    const platformId = h.platformUsers().get("leaver@example.com")?.id;
    expect(platformId).toBeDefined();

    // The IdP renames the user to a name another source's platform user holds: refused for good.
    await h.directory.updateUser("okta", u.resource.id, (c) => ({
      ...c.resource,
      userName: "taken@example.com",
    }));
    await h.waitForIdle();
    expect((await h.state.getStatus(ref))?.state).toBe("dead");

    // Then it deactivates the user (Entra's soft delete). The rename is still refused.
    await h.directory.updateUser("okta", u.resource.id, (c) => ({ ...c.resource, active: false }));
    await h.waitForIdle();
    const onPlatform = h.emulator.state().users.find((x) => x["id"] === platformId);
    expect(onPlatform?.["active"]).toBe(false);
    expect(onPlatform?.["userName"]).toBe("leaver@example.com");
    const status = await h.state.getStatus(ref);
    expect(status?.state).toBe("dead");
    expect(status?.lastError?.code).toBe("platform_conflict");
    const letters = await h.state.listDeadLetters({ offset: 0, limit: 10 });
    expect(letters.items.map((l) => l.code)).toEqual(["platform_conflict"]);
  });

  it("an attribute of another type on the platform does not keep the user active", async () => {
    h = await startJobsHarness("deprov-clash", {
      sources: {
        okta: { tokens: ["t"], attributes: { level: { from: `${ENT}:department`, type: "number" } } },
      },
    });
    h.emulator.seed({ attributes: [{ name: "level", type: "string" }] });
    const u = await h.directory.createUser(
      "okta",
      h.user("clash@example.com", { [ENT]: { department: "7" } }),
    );
    await h.waitForIdle();
    const ref: EntityRef = { source: "okta", kind: "user", id: u.resource.id };
    expect((await h.state.getStatus(ref))?.lastError?.code).toBe("attribute_type_clash");
    expect(h.platformUsers().get("clash@example.com")?.["active"]).toBe(true);

    // The user is on the platform: its groups take it in, the refused attribute notwithstanding.
    await h.directory.createGroup("okta", h.group("Team"), [u.resource.id]);
    await h.waitForIdle();
    const members = h.platformGroups().get("Team")?.members;
    expect([...(members ?? [])]).toEqual([h.platformUsers().get("clash@example.com")?.["id"]]);

    // Okta deactivates (a no-path PATCH, normalised to active: false).
    await h.directory.updateUser("okta", u.resource.id, (c) => ({ ...c.resource, active: false }));
    await h.waitForIdle();
    expect(h.platformUsers().get("clash@example.com")?.["active"]).toBe(false);
    expect((await h.state.getStatus(ref))?.state).toBe("dead");

    // And back: reactivation is not held back either.
    await h.directory.updateUser("okta", u.resource.id, (c) => ({ ...c.resource, active: true }));
    await h.waitForIdle();
    expect(h.platformUsers().get("clash@example.com")?.["active"]).toBe(true);
  });

  it("the deactivation's bulk call applied after the refusal does not mark the user synced", async () => {
    // A long lifecycle window: the refusal is recorded (dead letter) before the batch goes out.
    h = await startJobsHarness("deprov-late-flush", {
      sources: {
        okta: { tokens: ["t"], attributes: { level: { from: `${ENT}:department`, type: "number" } } },
      },
      sync: { lifecycleBatchWindowMs: 800 },
    });
    h.emulator.seed({ attributes: [{ name: "level", type: "string" }] });
    const u = await h.directory.createUser(
      "okta",
      h.user("late@example.com", { [ENT]: { department: "7" } }),
    );
    await h.waitForIdle();
    const ref: EntityRef = { source: "okta", kind: "user", id: u.resource.id };
    const deadBefore = await deadSyncs(h);
    await h.directory.updateUser("okta", u.resource.id, (c) => ({ ...c.resource, active: false }));
    await h.waitForIdle();
    expect(h.platformUsers().get("late@example.com")?.["active"]).toBe(false);
    // One refused sync for the one change: the settled deactivation did not claim the user synced
    // and mark it clean (which ran the sync, and its refusal, again).
    expect((await deadSyncs(h)) - deadBefore).toBe(1);
    const status = await h.state.getStatus(ref);
    expect(status?.state).toBe("dead");
    expect(status?.lastError?.code).toBe("attribute_type_clash");
  });

  it("the other writes of the sync still go out when one is refused", async () => {
    h = await startJobsHarness("deprov-others", {
      sources: {
        okta: { tokens: ["a"], attributes: { dept: { from: `${ENT}:department`, type: "string" } } },
        entra: { tokens: ["b"] },
      },
    });
    await h.directory.createUser("entra", h.user("taken@example.com"));
    const u = await h.directory.createUser(
      "okta",
      h.user("mover@example.com", { [ENT]: { department: "A" } }),
    );
    await h.waitForIdle();
    // One change: a refused rename and a new department value.
    await h.directory.updateUser("okta", u.resource.id, (c) => ({
      ...c.resource,
      userName: "taken@example.com",
      [ENT]: { department: "B" },
    }));
    await h.waitForIdle();
    const platformId = h.platformUsers().get("mover@example.com")?.id as string;
    const values = await h.platform.getUserAttributeValues(platformId);
    expect(values?.find((v) => v.name === "dept")?.value).toBe("B");
    const ref: EntityRef = { source: "okta", kind: "user", id: u.resource.id };
    expect((await h.state.getStatus(ref))?.lastError?.code).toBe("platform_conflict");
  });

  it("a deactivation and a profile change in one update: the flusher's record is not overwritten", async () => {
    // The PATCH takes longer than the lifecycle batch window: had the lifecycle been queued first,
    // its bulk call would be recorded before the PATCH, and the PATCH's record (read before) would
    // put `active` back over it; the reactivation that follows would then be planned as nothing.
    h = await startJobsHarness("deprov-record", { sync: { lifecycleBatchWindowMs: 20 } });
    const u = await h.directory.createUser("okta", h.user("mixed@example.com", { displayName: "Before" }));
    await h.waitForIdle();
    const ref: EntityRef = { source: "okta", kind: "user", id: u.resource.id };
    h.emulator.addFault({ type: "slow", delayMs: 400, count: 1, match: { operation: "patchUser" } });

    await h.directory.updateUser("okta", u.resource.id, (c) => ({
      ...c.resource,
      active: false,
      displayName: "After",
    }));
    await h.waitForIdle();
    expect(h.platformUsers().get("mixed@example.com")).toMatchObject({ active: false, displayName: "After" });
    expect((await h.state.getStatus(ref))?.state).toBe("synced");
    expect((await h.state.getApplied<{ lifecycle?: string }>(ref))?.lifecycle).toBe("inactive");

    await h.directory.updateUser("okta", u.resource.id, (c) => ({ ...c.resource, active: true }));
    await h.waitForIdle();
    expect(h.platformUsers().get("mixed@example.com")?.["active"]).toBe(true);
  });
});
