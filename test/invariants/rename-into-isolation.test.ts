import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type TestBridge, startTestBridge } from "../helpers/bridge-harness.js";
import { waitFor } from "../helpers/redis-test-prefix.js";

const SETTLED = ["succeeded", "failed", "awaiting-confirmation", "discarded"];

/**
 * Invariant 5 probed the way a second identity provider could reach the first one's platform
 * user: by renaming its own user into the other's userName (a case variant), then by every admin
 * path (resync of that user and of the whole source, reconciliation with `orphans: deactivate`)
 * and finally by deleting it with `onDelete: delete`. The first source's platform user is never
 * patched, deactivated, deleted or adopted; the second source's own platform user is the one its
 * deletion deletes.
 */
describe("a source renaming its user into another source's userName", () => {
  let h: TestBridge;
  beforeAll(async () => {
    h = await startTestBridge("inv-rename-iso", {
      sources: {
        okta: { tokens: ["okta-token"] },
        entra: { tokens: ["entra-token"], onDelete: "delete" },
      },
      config: {
        reconcile: { schedule: "0 0 1 1 *", orphans: "deactivate", maxDeprovisionShare: 1, keepRuns: 50 },
      },
    });
  });
  afterAll(async () => {
    await h?.close();
  });

  const settle = async (path: string) =>
    waitFor(
      async () => {
        const res = await h.admin().get(path);
        return SETTLED.includes(res.body.state) ? res.body : null;
      },
      { what: `${path} to settle` },
    );
  const platformUser = (id: string) => h.emulator.state().users.find((u) => u.id === id);

  it("never reaches the other source's platform user, by sync, resync, reconciliation or delete", async () => {
    await h.scim("okta").createUser("ann@example.com", { displayName: "Ann (okta)" });
    const entra = h.scim("entra");
    const ben = await entra.createUser("ben@example.com", { displayName: "Ben (entra)" });
    await h.waitForIdle();
    const ann = h.platformUsers().get("ann@example.com");
    const benPlatform = h.platformUsers().get("ben@example.com");
    expect(ann).toMatchObject({ active: true, displayName: "Ann (okta)" });
    expect(benPlatform).toMatchObject({ active: true });
    const annBefore = JSON.stringify(platformUser(ann?.id as string));

    // entra renames its own user into okta's userName (another case).
    const renamed = await entra.patchUser(ben.id, [
      { op: "replace", path: "userName", value: "ANN@example.com" },
      { op: "replace", path: "displayName", value: "Taken over" },
    ]);
    expect(renamed.status).toBe(200);
    await h.waitForIdle();
    expect(JSON.stringify(platformUser(ann?.id as string))).toBe(annBefore);
    const status = await h.admin().get(`/sources/entra/users/${ben.id}`);
    expect(status.body.platformId).toBe(benPlatform?.id);

    // A resync of that user and of the whole source.
    const one = await h.admin().post("/sources/entra/resync", { users: [ben.id] });
    expect(one.status).toBe(202);
    await settle(`/resyncs/${one.body.id}`);
    const all = await h.admin().post("/sources/entra/resync", {});
    expect(all.status).toBe(202);
    await settle(`/resyncs/${all.body.id}`);
    await h.waitForIdle();
    expect(JSON.stringify(platformUser(ann?.id as string))).toBe(annBefore);

    // Reconciliation of entra, orphans deactivated: okta's user is no orphan.
    const res = await h.admin().post("/sources/entra/reconcile", { dryRun: false });
    expect(res.status).toBe(202);
    const run = await settle(`/reconcile-runs/${res.body.runId}`);
    expect(run.counts.orphans).toBe(0);
    await h.waitForIdle();
    expect(JSON.stringify(platformUser(ann?.id as string))).toBe(annBefore);

    // Deleted at entra (onDelete: delete): entra's own platform user goes, okta's stays.
    expect((await entra.deleteUser(ben.id)).status).toBe(204);
    await h.waitForIdle();
    expect(platformUser(benPlatform?.id as string)).toBeUndefined();
    expect(JSON.stringify(platformUser(ann?.id as string))).toBe(annBefore);
    const writesToAnn = h.emulator
      .requests()
      .filter((r) => r.method !== "GET" && String(r.path).includes(String(ann?.id)));
    expect(writesToAnn).toEqual([]);
  });
});

/**
 * Embed-tenant sources in different tenants may use the same group names: each source's embed
 * group lives in its own tenant, and what one source does to its group (a member deactivated, the
 * group deleted) leaves the other tenant's group of that name as it is.
 */
describe("embed-tenant sources with the same group names in different tenants", () => {
  let h: TestBridge;
  beforeAll(async () => {
    h = await startTestBridge("inv-embed-tenants-iso", {
      sources: {
        portal: { tokens: ["portal-token"], target: { embedTenant: "acme" } },
        hr: { tokens: ["hr-token"], target: { embedTenant: "beta" } },
      },
    });
  });
  afterAll(async () => {
    await h?.close();
  });

  const members = (tenant: string, name: string) =>
    (h.emulator.state().embedTenants.find((t) => t.name === tenant)?.groups ?? [])
      .filter((g) => g.name === name)
      .map((g) => [...g.members].sort());

  it("each tenant keeps its own group of that name through deactivation and deletion at the other", async () => {
    const p = await h.scim("portal").createUser("x@example.com", { externalId: "ext-x" });
    const q = await h.scim("hr").createUser("x@example.com", { externalId: "ext-x" });
    const r = await h.scim("hr").createUser("y@example.com", { externalId: "ext-y" });
    const pg = await h.scim("portal").createGroup("Eng", [p.id]);
    const hg = await h.scim("hr").createGroup("Eng", [q.id, r.id]);
    await h.waitForIdle();
    expect(members("acme", "Eng")).toEqual([["ext-x"]]);
    expect(members("beta", "Eng")).toEqual([["ext-x", "ext-y"]]);
    for (const [source, id] of [
      ["portal", pg.id],
      ["hr", hg.id],
    ] as const) {
      const status = await h.admin().get(`/sources/${source}/groups/${id}`);
      expect(status.body.lastError ?? null).toBeNull();
    }

    await h.scim("hr").patchUser(q.id, [{ op: "replace", path: "active", value: false }]);
    await h.waitForIdle();
    expect(members("beta", "Eng")).toEqual([["ext-y"]]);
    expect(members("acme", "Eng")).toEqual([["ext-x"]]);

    expect((await h.scim("portal").deleteGroup(pg.id)).status).toBe(204);
    await h.waitForIdle();
    expect(members("beta", "Eng")).toEqual([["ext-y"]]);
  });
});
