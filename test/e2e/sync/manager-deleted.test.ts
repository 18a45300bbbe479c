import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type TestBridge, USER_SCHEMA, startTestBridge } from "../../helpers/bridge-harness.js";
import { waitFor } from "../../helpers/redis-test-prefix.js";

const ENT = "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User";

/**
 * A manager deleted at the identity provider while its reports still name it (the IdP does not
 * clear their manager.value): the bridge's keys of the manager are purged once it is deprovisioned,
 * so its bridge id no longer names a user of the source. The report's manager on the platform stays
 * the translation last applied (the deleted manager's platform id), on an unrelated change of the
 * report, in an attribute value that reads the manager, and through a resync and a reconciliation:
 * the bridge id, which means nothing to the platform, is never written.
 *
 * Both onDelete policies keep that id: the platform takes manager.value as an opaque string (no
 * reference check, not cleared when the manager's platform user is deleted: platform-api.yaml), so
 * with `delete` too the platform already holds that id, and keeping it writes nothing the identity
 * provider did not ask for.
 */
describe("a report whose manager was deleted at the identity provider keeps the manager's platform id", () => {
  let h: TestBridge;
  beforeAll(async () => {
    const attributes = { mgr: { from: `${ENT}:manager`, type: "string" as const } };
    h = await startTestBridge("manager-deleted", {
      sources: {
        deact: { tokens: ["deact-token"], onDelete: "deactivate", attributes },
        del: { tokens: ["del-token"], onDelete: "delete", attributes },
      },
    });
  });
  afterAll(async () => {
    await h?.close();
  });

  const platformUser = (userName: string) => h.platformUsers().get(userName);
  const platformManager = (userName: string) =>
    (platformUser(userName)?.[ENT] as { manager?: { value?: string } } | undefined)?.manager?.value;
  const attribute = (userName: string, name: string) => {
    const id = platformUser(userName)?.id;
    return h.emulator.state().attributeValues.find((v) => v.userId === id && v.name === name)?.value;
  };
  const resync = async (source: string, users: string[]) => {
    const res = await h.admin().post(`/sources/${source}/resync`, { users });
    expect(res.status).toBe(202);
    await waitFor(async () => (await h.admin().get(`/resyncs/${res.body.id}`)).body.state === "succeeded", {
      what: "the resync to finish",
    });
    await h.waitForIdle();
  };
  const reconcile = async (source: string) => {
    const started = await h.admin().post(`/sources/${source}/reconcile`, { dryRun: true });
    expect(started.status).toBe(202);
    return waitFor(
      async () => {
        const got = await h.admin().get(`/reconcile-runs/${started.body.runId}`);
        return ["queued", "running"].includes(got.body.state) ? null : got.body;
      },
      { what: "the reconciliation" },
    );
  };

  for (const source of ["deact", "del"] as const) {
    it(`onDelete ${source === "deact" ? "deactivate" : "delete"}: an unrelated change, a resync and a reconciliation keep it`, async () => {
      const scim = h.scim(source);
      const bossName = `boss-${source}@contoso.example`;
      const empName = `emp-${source}@contoso.example`;
      const boss = await scim.createUser(bossName);
      // The boss lands first: the report is created with its platform id (no PATCH of the manager).
      await h.waitForIdle();
      const emp = await scim.createUser(empName, {
        schemas: [USER_SCHEMA, ENT],
        displayName: "Emp",
        [ENT]: { department: "Ops", manager: { value: boss.id } },
      });
      await h.waitForIdle();
      const bossPlatformId = platformUser(bossName)?.id as string;
      expect(bossPlatformId).toBeDefined();
      expect(platformManager(empName)).toBe(bossPlatformId);
      expect(attribute(empName, "mgr")).toBe(bossPlatformId);

      // The boss is deleted at the identity provider; the report still names it.
      expect((await scim.deleteUser(boss.id)).status).toBe(204);
      await h.waitForIdle();
      if (source === "deact") expect(platformUser(bossName)?.active).toBe(false);
      else expect(platformUser(bossName)).toBeUndefined();
      expect((await scim.get(`/Users/${boss.id}`)).status).toBe(404);
      expect((await scim.get(`/Users/${emp.id}`)).body[ENT].manager.value).toBe(boss.id);
      expect(platformManager(empName)).toBe(bossPlatformId);

      // An unrelated change of the report: it lands, and the manager stays the boss's platform id.
      const renamed = await scim.patchUser(emp.id, [
        { op: "replace", path: "displayName", value: "Emp Two" },
      ]);
      expect(renamed.status).toBe(200);
      await h.waitForIdle();
      expect(platformUser(empName)?.displayName).toBe("Emp Two");
      expect(platformManager(empName)).toBe(bossPlatformId);
      expect(attribute(empName, "mgr")).toBe(bossPlatformId);

      // A resync of the report reads the platform and finds nothing to write.
      const writes = h.emulator.counters().writes;
      await resync(source, [emp.id]);
      expect(h.emulator.counters().writes).toBe(writes);
      expect(platformManager(empName)).toBe(bossPlatformId);
      expect(attribute(empName, "mgr")).toBe(bossPlatformId);

      // Nor does a reconciliation see drift in the report's manager or its attribute value.
      const run = await reconcile(source);
      expect(run.state).toBe("succeeded");
      expect(run.counts).toMatchObject({ changed: 0, attributeValues: 0, missing: 0 });
      expect(h.emulator.counters().writes).toBe(writes);

      // A new manager is translated; the deleted boss named again is no longer the last translation:
      // forwarded as it is; removed at the identity provider, removed on the platform.
      const boss2 = await scim.createUser(`boss2-${source}@contoso.example`);
      await scim.patchUser(emp.id, [{ op: "replace", path: `${ENT}:manager`, value: { value: boss2.id } }]);
      await h.waitForIdle();
      const boss2PlatformId = platformUser(`boss2-${source}@contoso.example`)?.id;
      expect(platformManager(empName)).toBe(boss2PlatformId);
      expect(attribute(empName, "mgr")).toBe(boss2PlatformId);
      await scim.patchUser(emp.id, [{ op: "replace", path: `${ENT}:manager`, value: { value: boss.id } }]);
      await h.waitForIdle();
      expect(platformManager(empName)).toBe(boss.id);
      expect(attribute(empName, "mgr")).toBe(boss.id);
      await scim.patchUser(emp.id, [{ op: "remove", path: `${ENT}:manager` }]);
      await h.waitForIdle();
      expect(platformManager(empName)).toBeUndefined();
      expect(h.emulator.violations()).toEqual([]);
    });
  }

  it("a manager value that was never a user of the source is forwarded as it is", async () => {
    const scim = h.scim("deact");
    await scim.createUser("emp-number@contoso.example", {
      schemas: [USER_SCHEMA, ENT],
      [ENT]: { manager: { value: "E-1042" } },
    });
    await h.waitForIdle();
    expect(platformManager("emp-number@contoso.example")).toBe("E-1042");
    expect(attribute("emp-number@contoso.example", "mgr")).toBe("E-1042");
  });
});
