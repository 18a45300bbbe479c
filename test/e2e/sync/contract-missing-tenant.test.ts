/**
 * A tenant comes into being with its first group (platform-api.yaml, listEmbedTenants). When that
 * first create failed and the group was renamed before it could be sent again, the bridge looks for
 * a create under the old name that may have landed: it lists the groups of a tenant that does not
 * exist. The contract documents no answer for that; the emulator answers 404 by default, another
 * platform may answer an empty list. Either way there is no such group, and the group is created
 * under its new name: not a dead letter.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { AnswerVariations } from "../../../src/platform/emulator/answer-variations.js";
import { PLATFORM_TOKEN, type TestBridge, startTestBridge } from "../../helpers/bridge-harness.js";
import { waitFor } from "../../helpers/redis-test-prefix.js";

interface TenantView {
  name: string;
  groups: Array<{ name: string; members: string[] }>;
}

describe.each<[string, AnswerVariations]>([
  ["404 (the emulator's default)", {}],
  ["an empty list", { emptyListForMissingTenant: true }],
])("a lost first create of a tenant, the missing tenant's groups answered with %s", (_label, variations) => {
  let h: TestBridge | undefined;
  afterEach(async () => {
    await h?.close();
    h = undefined;
  });

  it("creates the renamed group in the tenant instead of dead-lettering it", async () => {
    const bridge = await startTestBridge(
      `contract-missing-tenant-${variations.emptyListForMissingTenant ? 1 : 0}`,
      {
        sources: { acme: { tokens: ["acme-token"], target: { embedTenant: "acme" } } },
        faults: [{ type: "error", status: 503, match: { operation: "createEmbedGroup" } }],
      },
    );
    h = bridge;
    bridge.emulator.setVariations(variations);
    const scim = bridge.scim("acme");
    const user = await scim.createUser("member@example.com");
    const group = await scim.createGroup("Team", [user.id]);
    await waitFor(async () => bridge.emulator.count("createEmbedGroup") > 0, { what: "a create to fail" });

    expect(
      (await scim.patchGroup(group.id, [{ op: "replace", path: "displayName", value: "Team Two" }])).status,
    ).toBeLessThan(300);
    // The sync of the new name looks for a create under the old one first.
    await waitFor(async () => bridge.emulator.count("listEmbedGroups") > 0, {
      what: "the lookup of the lost create",
      timeoutMs: 30_000,
    });
    bridge.emulator.clearFaults();
    await bridge.waitForIdle(30_000);

    const tenants = (bridge.emulator.state() as unknown as { embedTenants: TenantView[] }).embedTenants;
    expect(tenants.map((t) => t.name)).toEqual(["acme"]);
    expect(tenants[0]?.groups).toEqual([
      expect.objectContaining({ name: "Team Two", members: ["member@example.com"] }),
    ]);
    expect((await bridge.admin().get("/status")).body).toMatchObject({ idle: true, deadLetters: 0 });
    expect(bridge.emulator.violations()).toEqual([]);
  }, 60_000);
});

/**
 * A reconciliation of an embed-tenant source reads its tenant's groups. A tenant deleted on the
 * platform behind the bridge's back (or not made yet) has none: the run finds the source's groups
 * missing and puts them back, instead of failing on the 404.
 */
describe.each<[string, AnswerVariations]>([
  ["404 (the emulator's default)", {}],
  ["an empty list", { emptyListForMissingTenant: true }],
])("reconciling an embed source whose tenant is gone, its lists answered with %s", (_label, variations) => {
  let h: TestBridge | undefined;
  afterEach(async () => {
    await h?.close();
    h = undefined;
  });

  it("reports the group missing and creates it again", async () => {
    const bridge = await startTestBridge(
      `contract-gone-tenant-${variations.emptyListForMissingTenant ? 1 : 0}`,
      {
        sources: { acme: { tokens: ["acme-token"], target: { embedTenant: "acme" } } },
        config: {
          reconcile: { schedule: "0 0 1 1 *", orphans: "report", maxDeprovisionShare: 0.5, keepRuns: 50 },
        },
      },
    );
    h = bridge;
    bridge.emulator.setVariations(variations);
    const scim = bridge.scim("acme");
    const user = await scim.createUser("member@example.com");
    await scim.createGroup("Team", [user.id]);
    await bridge.waitForIdle();
    const gone = await fetch(`${bridge.platformUrl}/api/v1/embed-tenants/acme`, {
      method: "DELETE",
      headers: { Authorization: `Bearer ${PLATFORM_TOKEN}` },
    });
    expect(gone.status).toBe(204);

    const started = await bridge.admin().post("/sources/acme/reconcile", { dryRun: false });
    expect(started.status).toBe(202);
    const run = await waitFor(
      async () => {
        const res = await bridge.admin().get(`/reconcile-runs/${started.body.runId}`);
        return ["queued", "running"].includes(res.body.state) ? null : res.body;
      },
      { what: "the run to settle" },
    );
    expect(run.state).toBe("succeeded");
    expect(run.counts.missing + run.counts.deletedBehind).toBe(1);
    await bridge.waitForIdle();
    const tenants = (bridge.emulator.state() as unknown as { embedTenants: TenantView[] }).embedTenants;
    expect(tenants.find((t) => t.name === "acme")?.groups).toEqual([
      expect.objectContaining({ name: "Team", members: ["member@example.com"] }),
    ]);
    expect(bridge.emulator.violations()).toEqual([]);
  }, 60_000);
});
