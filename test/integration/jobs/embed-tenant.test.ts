import { afterEach, describe, expect, it } from "vitest";
import { type JobsHarness, startJobsHarness } from "./jobs-harness.js";

/** Embed-tenant sources: groups become embed groups, members embed users by externalId. */
describe("embed-tenant sources", () => {
  let h: JobsHarness | undefined;
  afterEach(async () => {
    await h?.close();
    h = undefined;
  });

  const tenant = (name: string) => h?.emulator.state().embedTenants.find((t) => t.name === name);
  const embedGroup = (t: string, name: string) => tenant(t)?.groups.find((g) => g.name === name);

  it("creates, renames and deletes embed groups; members by externalId; deactivated users leave", async () => {
    h = await startJobsHarness("embed", {
      sources: { portal: { tokens: ["t"], target: { embedTenant: "acme" } } },
    });
    const d = h.directory;
    const a = await d.createUser(
      "portal",
      h.user("ann@acme.example", {
        externalId: "ext-ann",
        emails: [{ value: "ann@acme.example", primary: true }],
      }),
    );
    const b = await d.createUser("portal", h.user("ben@acme.example")); // no externalId: userName is used
    const g = await d.createGroup("portal", h.group("Viewers"), [a.resource.id, b.resource.id]);
    await h.waitForIdle();
    expect(embedGroup("acme", "Viewers")?.members.sort()).toEqual(["ben@acme.example", "ext-ann"]);
    // Embed-source users never become workspace users.
    expect(h.emulator.state().users).toHaveLength(0);
    expect(h.emulator.count("createUser")).toBe(0);

    // Deactivation: the user leaves every group of the tenant.
    await d.updateUser("portal", b.resource.id, (c) => ({ ...c.resource, active: false }));
    await h.waitForIdle();
    expect(embedGroup("acme", "Viewers")?.members).toEqual(["ext-ann"]);
    await d.updateUser("portal", b.resource.id, (c) => ({ ...c.resource, active: true }));
    await d.updateGroup("portal", g.resource.id, (c) => ({
      resource: { ...c.resource, displayName: "Readers" },
    }));
    await h.waitForIdle();
    expect(embedGroup("acme", "Viewers")).toBeUndefined();
    expect(embedGroup("acme", "Readers")?.members.sort()).toEqual(["ben@acme.example", "ext-ann"]);

    // Deletion of a user removes it; deleting the group deletes the embed group.
    await d.deleteUser("portal", a.resource.id);
    await h.waitForIdle();
    expect(embedGroup("acme", "Readers")?.members).toEqual(["ben@acme.example"]);
    await d.deleteGroup("portal", g.resource.id);
    await h.waitForIdle();
    expect(tenant("acme")?.groups ?? []).toHaveLength(0);
    expect(h.emulator.violations()).toEqual([]);

    // A converged embed source syncs with zero writes.
    const writes = h.writes();
    await d.markDirty({ source: "portal", kind: "user", id: b.resource.id });
    await h.waitForIdle();
    expect(h.writes()).toBe(writes);
  });

  it("derives the tenant from the group name; a name without a tenant is a visible error", async () => {
    h = await startJobsHarness("embed-pattern", {
      sources: {
        portal: { tokens: ["t"], target: { embedTenantFromGroup: { pattern: "^tenant-([A-Za-z0-9]+)-" } } },
      },
    });
    const u = await h.directory.createUser("portal", h.user("cy@x.example", { externalId: "cy" }));
    await h.directory.createGroup("portal", h.group("tenant-Globex-admins"), [u.resource.id]);
    const bad = await h.directory.createGroup("portal", h.group("staff"), [u.resource.id]);
    await h.waitForIdle();
    expect(embedGroup("globex", "tenant-Globex-admins")?.members).toEqual(["cy"]);
    const status = await h.state.getStatus({ source: "portal", kind: "group", id: bad.resource.id });
    expect(status).toMatchObject({ state: "dead", lastError: { code: "no_embed_tenant" } });
  });
});
