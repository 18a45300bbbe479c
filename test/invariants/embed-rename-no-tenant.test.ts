import { afterEach, describe, expect, it } from "vitest";
import type { EntityRef } from "../../src/scim/scim-types.js";
import { type JobsHarness, startJobsHarness } from "../integration/jobs/jobs-harness.js";

/**
 * Nobody is left in an embed group: a tenant group (embedTenantFromGroup) renamed to a name the
 * pattern does not match keeps its embed group, and that embed group keeps following the group's
 * membership: a member deactivated or deleted at the identity provider leaves it. The rename
 * stays a visible error (a dead letter, no_embed_tenant).
 */
describe("an embed group whose group's new name gives no tenant", () => {
  let h: JobsHarness | undefined;
  afterEach(async () => {
    await h?.close();
    h = undefined;
  });

  const groupsOf = (tenant: string) =>
    h?.emulator.state().embedTenants.find((t) => t.name === tenant)?.groups ?? [];

  it("still loses a deactivated or deleted member; the rename is a dead letter", async () => {
    h = await startJobsHarness("embed-no-tenant", {
      sources: {
        tenants: {
          tokens: ["t"],
          target: { embedTenantFromGroup: { pattern: "^tenant-([A-Za-z0-9]+)-" } },
        },
      },
    });
    const d = h.directory;
    const ann = await d.createUser("tenants", h.user("ann@x.example", { externalId: "ann" }));
    const ben = await d.createUser("tenants", h.user("ben@x.example", { externalId: "ben" }));
    const cy = await d.createUser("tenants", h.user("cy@x.example", { externalId: "cy" }));
    const g = await d.createGroup("tenants", h.group("tenant-gamma-admins"), [
      ann.resource.id,
      ben.resource.id,
      cy.resource.id,
    ]);
    await h.waitForIdle();
    const ref: EntityRef = { source: "tenants", kind: "group", id: g.resource.id };
    expect(groupsOf("gamma").map((x) => [x.name, [...x.members].sort()])).toEqual([
      ["tenant-gamma-admins", ["ann", "ben", "cy"]],
    ]);

    // Renamed out of the pattern: the embed group stays as it is, the rename is a visible error.
    await d.updateGroup("tenants", g.resource.id, (c) => ({
      resource: { ...c.resource, displayName: "Gamma admins (retired)" },
    }));
    await h.waitForIdle();
    expect(await h.state.getStatus(ref)).toMatchObject({
      state: "dead",
      lastError: { code: "no_embed_tenant" },
    });
    expect(groupsOf("gamma").map((x) => [x.name, [...x.members].sort()])).toEqual([
      ["tenant-gamma-admins", ["ann", "ben", "cy"]],
    ]);

    // A deactivated member leaves the embed group all the same.
    await d.updateUser("tenants", ben.resource.id, (c) => ({ ...c.resource, active: false }));
    await h.waitForIdle();
    expect(groupsOf("gamma").map((x) => [x.name, [...x.members].sort()])).toEqual([
      ["tenant-gamma-admins", ["ann", "cy"]],
    ]);
    // And so does a deleted one.
    await d.deleteUser("tenants", cy.resource.id);
    await h.waitForIdle();
    expect(groupsOf("gamma").map((x) => [x.name, [...x.members].sort()])).toEqual([
      ["tenant-gamma-admins", ["ann"]],
    ]);

    // The rename is still refused, visibly, and nothing was created elsewhere.
    expect(await h.state.getStatus(ref)).toMatchObject({
      state: "dead",
      lastError: { code: "no_embed_tenant" },
    });
    const letters = await h.state.listDeadLetters({ offset: 0, limit: 10 });
    expect(letters.items.map((l) => [l.ref, l.code])).toEqual([[ref, "no_embed_tenant"]]);
    expect(h.emulator.state().embedTenants.flatMap((t) => t.groups)).toHaveLength(1);
    expect(h.emulator.violations()).toEqual([]);

    // Renamed back into the pattern: synced again, the error cleared.
    await d.updateGroup("tenants", g.resource.id, (c) => ({
      resource: { ...c.resource, displayName: "tenant-gamma-owners" },
    }));
    await h.waitForIdle();
    expect(groupsOf("gamma").map((x) => [x.name, [...x.members].sort()])).toEqual([
      ["tenant-gamma-owners", ["ann"]],
    ]);
    expect((await h.state.getStatus(ref))?.state).toBe("synced");
    expect(await h.state.countDeadLetters()).toBe(0);
  });

  it("a group that never had an embed group is a dead letter at once, and nothing is created", async () => {
    h = await startJobsHarness("embed-no-tenant-new", {
      sources: {
        tenants: {
          tokens: ["t"],
          target: { embedTenantFromGroup: { pattern: "^tenant-([A-Za-z0-9]+)-" } },
        },
      },
    });
    const u = await h.directory.createUser("tenants", h.user("dee@x.example", { externalId: "dee" }));
    const g = await h.directory.createGroup("tenants", h.group("staff"), [u.resource.id]);
    await h.waitForIdle();
    const ref: EntityRef = { source: "tenants", kind: "group", id: g.resource.id };
    expect(await h.state.getStatus(ref)).toMatchObject({
      state: "dead",
      lastError: { code: "no_embed_tenant" },
    });
    expect(h.emulator.state().embedTenants.flatMap((t) => t.groups)).toHaveLength(0);
    expect(h.writes()).toBe(0);
  });

  it("a rename to a name longer than the platform takes keeps the membership in step too", async () => {
    h = await startJobsHarness("embed-long-name", {
      sources: { fixed: { tokens: ["t"], target: { embedTenant: "acme" } } },
    });
    const d = h.directory;
    const ann = await d.createUser("fixed", h.user("ann@x.example", { externalId: "ann" }));
    const ben = await d.createUser("fixed", h.user("ben@x.example", { externalId: "ben" }));
    const g = await d.createGroup("fixed", h.group("Admins"), [ann.resource.id, ben.resource.id]);
    await h.waitForIdle();
    const ref: EntityRef = { source: "fixed", kind: "group", id: g.resource.id };

    await d.updateGroup("fixed", g.resource.id, (c) => ({
      resource: { ...c.resource, displayName: "A".repeat(201) },
    }));
    await h.waitForIdle();
    expect((await h.state.getStatus(ref))?.lastError?.code).toBe("embed_group_name_too_long");

    // A deactivated member leaves the embed group all the same.
    await d.updateUser("fixed", ben.resource.id, (c) => ({ ...c.resource, active: false }));
    await h.waitForIdle();
    expect(groupsOf("acme").map((x) => [x.name, [...x.members].sort()])).toEqual([["Admins", ["ann"]]]);
    expect((await h.state.getStatus(ref))?.lastError?.code).toBe("embed_group_name_too_long");
    expect(h.emulator.violations()).toEqual([]);
  });
});
