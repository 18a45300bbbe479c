import { afterEach, describe, expect, it } from "vitest";
import type { EntityRef } from "../../src/scim/scim-types.js";
import { type JobsHarness, startJobsHarness } from "../integration/jobs/jobs-harness.js";

/**
 * Nobody is left in a group: a group rename the platform refuses for good (409: another source's
 * platform group holds the name) does not hold back the group's membership changes. A member
 * removed at the identity provider leaves the platform group; the refusal stays visible (a dead
 * letter, platform_conflict).
 */
describe("a group's membership is not held back by a refused rename", () => {
  let h: JobsHarness | undefined;
  afterEach(async () => {
    await h?.close();
    h = undefined;
  });

  it("a rename into another source's group name (409) does not keep a removed member in", async () => {
    h = await startJobsHarness("group-rename-conflict", {
      sources: { okta: { tokens: ["a"] }, onelogin: { tokens: ["b"] } },
    });
    const ok = await h.directory.createUser("okta", h.user("ok@example.com"));
    await h.directory.createGroup("okta", h.group("Taken"), [ok.resource.id]);
    const mover = await h.directory.createUser("onelogin", h.user("mover@example.com"));
    const stays = await h.directory.createUser("onelogin", h.user("stays@example.com"));
    const g = await h.directory.createGroup("onelogin", h.group("Mine"), [
      mover.resource.id,
      stays.resource.id,
    ]);
    await h.waitForIdle();
    const ref: EntityRef = { source: "onelogin", kind: "group", id: g.resource.id };
    const moverId = h.platformUsers().get("mover@example.com")?.id as string;
    const staysId = h.platformUsers().get("stays@example.com")?.id as string;
    const mine = h.platformGroups().get("Mine");
    expect([...(mine?.members ?? [])].sort()).toEqual([moverId, staysId].sort());

    // The IdP renames the group to the name of okta's platform group: refused for good.
    await h.directory.updateGroup("onelogin", g.resource.id, (c) => ({
      resource: { ...c.resource, displayName: "Taken" },
    }));
    await h.waitForIdle();
    expect(await h.state.getStatus(ref)).toMatchObject({
      state: "dead",
      lastError: { code: "platform_conflict" },
    });

    // Then it removes a member. The rename is still refused; the removal reaches the platform.
    await h.directory.updateGroup("onelogin", g.resource.id, (c) => ({
      resource: c.resource,
      members: { remove: [mover.resource.id] },
    }));
    await h.waitForIdle();
    const after = h.emulator.state().groups.find((x) => x.id === mine?.id);
    expect(after?.displayName).toBe("Mine");
    expect([...(after?.members ?? [])]).toEqual([staysId]);
    // okta's group is untouched.
    expect([...(h.platformGroups().get("Taken")?.members ?? [])]).toEqual([
      h.platformUsers().get("ok@example.com")?.id,
    ]);
    const status = await h.state.getStatus(ref);
    expect(status).toMatchObject({ state: "dead", lastError: { code: "platform_conflict" } });
    const letters = await h.state.listDeadLetters({ offset: 0, limit: 10 });
    expect(letters.items.map((l) => [l.ref, l.code])).toEqual([[ref, "platform_conflict"]]);
    expect(h.emulator.violations()).toEqual([]);
  });
});
