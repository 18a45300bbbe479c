import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { SCHEMA_USER } from "../../../src/scim/scim-types.js";
import { type CrashHarness, startCrashHarness } from "./fixtures/crash-harness.js";
import type { ProxiedCall } from "./fixtures/holding-proxy.js";

const BULK_PATH = "/api/v1/users/bulk";
const PER_SOURCE = 30;

interface BulkBody {
  action: "ACTIVATE" | "DEACTIVATE" | "DELETE";
  userIds: string[];
}

/**
 * Invariant 2 and safe deprovisioning when a worker process dies (SIGKILL) while the bulk call
 * that deprovisions deleted users is out (applied with its answer lost, or not yet seen by the
 * platform), and the identity provider creates users of the same userNames again while no worker
 * runs (a new id at the source). okta deletes (onDelete: delete), hr deactivates. After a restart
 * each userName has exactly one platform user, active, and the deprovisioning of the old user
 * never lands on the new one.
 */
describe("crash during deprovisioning, users created again meanwhile (SIGKILL)", () => {
  let h: CrashHarness;
  beforeEach(async () => {
    h = await startCrashHarness("crash-recreate", {
      okta: { tokens: ["okta-token"], onDelete: "delete" },
      hr: { tokens: ["hr-token"], onDelete: "deactivate" },
    });
  });
  afterEach(async () => {
    await h?.close();
  });

  const userName = (source: string, i: number) => `again${i}@${source}.example`;
  const SOURCES = ["okta", "hr"] as const;

  async function createAll(): Promise<Array<{ source: string; id: string }>> {
    const out: Array<{ source: string; id: string }> = [];
    for (const source of SOURCES) {
      for (let i = 0; i < PER_SOURCE; i++) {
        const rec = await h.directory.createUser(source, {
          schemas: [SCHEMA_USER],
          userName: userName(source, i),
          active: true,
        });
        out.push({ source, id: rec.resource.id });
      }
    }
    return out;
  }

  const cases = [
    { action: "DELETE", until: "answer" },
    { action: "DELETE", until: "request" },
    { action: "DEACTIVATE", until: "answer" },
    { action: "DEACTIVATE", until: "request" },
  ] as const;
  for (const { action, until } of cases) {
    it(`the ${action} call ${until === "answer" ? "applied, its answer lost" : "not yet seen by the platform"}`, async () => {
      const worker = await h.spawnWorker();
      const first = await createAll();
      await h.waitIdle("the initial load");
      const oldIds = new Set(h.emulator.state().users.map((u) => String(u.id)));
      expect(oldIds.size).toBe(2 * PER_SOURCE);

      const hold = h.proxy.hold(
        (c: ProxiedCall) => c.path === BULK_PATH && (c.body as BulkBody).action === action,
        { until },
      );
      for (const { source, id } of first) await h.directory.deleteUser(source, id);
      const held = await hold.reached;
      await h.kill(worker);
      hold.release();
      expect((held.body as BulkBody).userIds.length).toBeGreaterThan(0);

      // While no worker runs, the identity provider creates them all again.
      await createAll();
      const worker2 = await h.spawnWorker();
      await h.waitIdle("convergence after the restart", 25_000);
      await h.stop(worker2);

      const users = h.emulator.state().users;
      const byName = new Map(users.map((u) => [String(u["userName"]).toLowerCase(), u]));
      expect(byName.size, "no platform user twice").toBe(users.length);
      const wrong: string[] = [];
      for (const source of SOURCES) {
        for (let i = 0; i < PER_SOURCE; i++) {
          const u = byName.get(userName(source, i));
          if (!u) wrong.push(`${userName(source, i)}: missing`);
          else if (u["active"] !== true) wrong.push(`${userName(source, i)}: inactive`);
          else if (source === "okta" && oldIds.has(String(u.id)))
            wrong.push(`${userName(source, i)}: not deleted`);
        }
      }
      expect(wrong).toEqual([]);
      expect(users).toHaveLength(2 * PER_SOURCE);
      // Deprovisioning named only the old platform users.
      const offCalls = h.proxy.calls
        .filter((c) => c.path === BULK_PATH)
        .map((c) => c.body as BulkBody)
        .filter((b) => b.action !== "ACTIVATE");
      expect(offCalls.flatMap((b) => b.userIds).filter((id) => !oldIds.has(id))).toEqual([]);
      await h.expectSettled();
    }, 60_000);
  }
});
