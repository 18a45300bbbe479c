import { afterEach, describe, expect, it } from "vitest";
import { syncGroup } from "../../../src/sync/sync-group.js";
import { type JobsHarness, startJobsHarness } from "./jobs-harness.js";

/**
 * An embed user's email and displayName follow its source user. The contract's one write that
 * carries them is the member add (POST .../groups/{id}/users: an embed user is identified by its
 * externalId; adding a present member is not an error), and the emulator stores the values it
 * is sent for a present embed user too (EmbedStore.ensureUser).
 */
describe("embed users' email and displayName", () => {
  let h: JobsHarness | undefined;
  afterEach(async () => {
    await h?.close();
    h = undefined;
  });

  const embedUser = (tenant: string, externalId: string) =>
    h?.emulator
      .state()
      .embedTenants.find((t) => t.name === tenant)
      ?.users.find((u) => u.externalId === externalId);

  it("a member's new email and displayName reach its embed user; converged, nothing is written", async () => {
    h = await startJobsHarness("embed-member-profile", {
      sources: { portal: { tokens: ["t"], target: { embedTenant: "acme" } } },
    });
    const d = h.directory;
    const ann = await d.createUser(
      "portal",
      h.user("ann@acme.example", {
        externalId: "ext-ann",
        displayName: "Ann Old",
        emails: [{ value: "ann@old.example", primary: true }],
      }),
    );
    const ben = await d.createUser("portal", h.user("ben@acme.example", { displayName: "Ben" }));
    const g = await d.createGroup("portal", h.group("Viewers"), [ann.resource.id, ben.resource.id]);
    await h.waitForIdle();
    expect(embedUser("acme", "ext-ann")).toMatchObject({ email: "ann@old.example", displayName: "Ann Old" });

    const before = h.writes();
    await d.updateUser("portal", ann.resource.id, (c) => ({
      ...c.resource,
      displayName: "Ann New",
      emails: [{ value: "ann@new.example", primary: true }],
    }));
    await h.waitForIdle();
    expect(embedUser("acme", "ext-ann")).toMatchObject({ email: "ann@new.example", displayName: "Ann New" });
    // One member add (the changed member's chunk); the other member keeps its values.
    expect(h.writes() - before).toBe(1);
    expect(embedUser("acme", "ben@acme.example")).toMatchObject({ displayName: "Ben" });
    expect(h.emulator.violations()).toEqual([]);

    // Converged: another sync of the group, and a resync of it (it reads the platform), write nothing.
    const writes = h.writes();
    await d.markDirty({ source: "portal", kind: "group", id: g.resource.id });
    await h.waitForIdle();
    const ref = { source: "portal", kind: "group" as const, id: g.resource.id };
    await syncGroup(h.syncContext(), ref, { resync: true }, {});
    expect(h.writes()).toBe(writes);
  });
});
