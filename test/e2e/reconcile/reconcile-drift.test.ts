import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runAdminCommand } from "../../../src/cli/admin-commands.js";
import { SCHEMA_ENTERPRISE_USER } from "../../../src/scim/scim-types.js";
import {
  E2E_ADMIN_TOKEN,
  E2E_VIEWER_TOKEN,
  type TestBridge,
  startTestBridge,
} from "../../helpers/bridge-harness.js";
import { waitFor } from "../../helpers/redis-test-prefix.js";

const COUNTS_ZERO = {
  missing: 0,
  changed: 0,
  activeMismatch: 0,
  membership: 0,
  attributeValues: 0,
  deletedBehind: 0,
  orphans: 0,
};

/** Drift injected behind the bridge's back is found by a run and repaired; a dry run changes nothing. */
describe("reconciliation end to end (bridge + emulator over HTTP)", () => {
  let h: TestBridge;
  const users: string[] = [];
  const groups: string[] = [];

  const platformIdOf = async (kind: "users" | "groups", id: string): Promise<string> => {
    const res = await h.admin(E2E_VIEWER_TOKEN).get(`/sources/okta/${kind}/${id}`);
    expect(res.status).toBe(200);
    return res.body.platformId as string;
  };
  const reconcile = async (dryRun: boolean) => {
    const res = await h.admin().post("/sources/okta/reconcile", { dryRun });
    expect(res.status).toBe(202);
    return waitFor(
      async () => {
        const run = await h.admin(E2E_VIEWER_TOKEN).get(`/reconcile-runs/${res.body.runId}`);
        return ["queued", "running"].includes(run.body.state) ? null : run.body;
      },
      { what: "the run to settle" },
    );
  };

  beforeAll(async () => {
    h = await startTestBridge("e2e-reconcile", {
      sources: {
        okta: {
          tokens: ["okta-token"],
          attributes: { department: { from: `${SCHEMA_ENTERPRISE_USER}:department`, type: "string" } },
        },
      },
    });
    const scim = h.scim("okta");
    for (let i = 0; i < 10; i++) {
      const user = await scim.createUser(`e2e${i}@example.com`, {
        schemas: ["urn:ietf:params:scim:schemas:core:2.0:User", SCHEMA_ENTERPRISE_USER],
        [SCHEMA_ENTERPRISE_USER]: { department: "R&D" },
      });
      users.push(user.id);
    }
    groups.push((await scim.createGroup("Eng", users.slice(0, 3))).id);
    groups.push((await scim.createGroup("Ops", users.slice(3, 5))).id);
    expect((await scim.patchUser(users[0]!, [{ op: "replace", path: "active", value: false }])).status).toBe(
      200,
    );
    await h.waitForIdle();
  }, 30_000);

  afterAll(async () => {
    await h?.close();
  });

  it("refuses tokens of the wrong kind and lets viewers only read", async () => {
    expect((await h.admin("okta-token").get("/status")).status).toBe(401);
    expect((await h.http.get("/admin/v1/status")).status).toBe(401);
    expect(
      (await h.http.get("/scim/v2/okta/Users").set("Authorization", `Bearer ${E2E_ADMIN_TOKEN}`)).status,
    ).toBe(401);
    expect((await h.admin(E2E_VIEWER_TOKEN).post("/sources/okta/reconcile", { dryRun: true })).status).toBe(
      403,
    );
    expect((await h.admin(E2E_VIEWER_TOKEN).post("/sources/okta/resync", {})).status).toBe(403);
    const status = await h.admin(E2E_VIEWER_TOKEN).get("/status");
    expect(status.body).toMatchObject({ idle: true, pending: 0, deadLetters: 0, queues: expect.any(Object) });
  });

  it("finds the injected drift in a dry run that writes nothing, then repairs it", async () => {
    const clean = await reconcile(true);
    expect(clean).toMatchObject({ state: "succeeded", counts: COUNTS_ZERO });

    const department = h.emulator.state().attributes.find((a) => a.name === "department");
    h.emulator.drift({
      action: "setUserActive",
      userId: await platformIdOf("users", users[0]!),
      active: true,
    });
    h.emulator.drift({
      action: "removeGroupMember",
      groupId: await platformIdOf("groups", groups[0]!),
      userId: await platformIdOf("users", users[1]!),
    });
    h.emulator.drift({
      action: "setAttributeValue",
      userId: await platformIdOf("users", users[2]!),
      attributeId: department!.id,
      value: "Sales",
    });
    h.emulator.drift({ action: "deleteGroup", groupId: await platformIdOf("groups", groups[1]!) });
    h.emulator.drift({ action: "addOrphanUser", user: { userName: "stranger@example.com" } });
    const drifted = {
      ...COUNTS_ZERO,
      activeMismatch: 1,
      membership: 1,
      attributeValues: 1,
      deletedBehind: 1,
      orphans: 1,
    };

    const writes = h.emulator.counters().writes;
    const dry = await reconcile(true);
    expect(dry).toMatchObject({ state: "succeeded", dryRun: true, counts: drifted });
    expect(h.emulator.counters().writes).toBe(writes);

    const run = await reconcile(false);
    expect(run).toMatchObject({ state: "succeeded", dryRun: false, counts: drifted });
    await h.waitForIdle();
    const platform = h.emulator.state();
    expect(platform.users.find((u) => u.userName === "e2e0@example.com")?.active).toBe(false);
    expect(platform.groups.find((g) => g.displayName === "Eng")?.members).toContain(
      await platformIdOf("users", users[1]!),
    );
    expect(platform.groups.some((g) => g.displayName === "Ops")).toBe(true);
    const user2 = await platformIdOf("users", users[2]!);
    expect(platform.attributeValues.find((v) => v.userId === user2 && v.name === "department")?.value).toBe(
      "R&D",
    );

    const after = await reconcile(true);
    expect(after.counts).toEqual({ ...COUNTS_ZERO, orphans: 1 });
  });

  it("holds a run above the deprovisioning share until an admin confirms", async () => {
    const scim = h.scim("okta");
    for (const id of users.slice(4, 6)) {
      expect((await scim.patchUser(id, [{ op: "replace", path: "active", value: false }])).status).toBe(200);
    }
    await h.waitForIdle();
    // Users 0, 4 and 5 are inactive at the source; behind the bridge's back they come back.
    for (const id of [users[0]!, users[4]!, users[5]!]) {
      h.emulator.drift({ action: "setUserActive", userId: await platformIdOf("users", id), active: true });
    }
    const held = await reconcile(false);
    expect(held).toMatchObject({
      state: "awaiting-confirmation",
      guard: { plannedDeprovisions: 3, tripped: true },
    });
    await h.waitForIdle();
    const activeNow = () => h.emulator.state().users.filter((u) => u.active !== false).length;
    expect(activeNow()).toBe(11); // 10 users + the orphan: nothing deprovisioned

    expect((await h.admin(E2E_VIEWER_TOKEN).post(`/reconcile-runs/${held.runId}/confirm`)).status).toBe(403);
    expect((await h.admin().post(`/reconcile-runs/${held.runId}/confirm`)).status).toBe(202);
    await waitFor(
      async () => (await h.admin().get(`/reconcile-runs/${held.runId}`)).body.state === "succeeded",
      {
        what: "the confirmed run to apply",
      },
    );
    await h.waitForIdle();
    expect(activeNow()).toBe(8);

    const audit = await h.admin(E2E_VIEWER_TOKEN).get("/audit");
    expect(audit.body.items.map((e: { action: string }) => e.action)).toContain("reconcile.confirm");
  });

  it("resyncs one user and a whole source as operations with progress", async () => {
    const one = await h.admin().post("/sources/okta/resync", { users: [users[7]!] });
    expect(one.status).toBe(202);
    const all = await h.admin().post("/sources/okta/resync", {});
    expect(all.status).toBe(202);
    for (const [id, enqueued] of [
      [one.body.id, 1],
      [all.body.id, 12],
    ] as const) {
      const op = await waitFor(
        async () => {
          const res = await h.admin(E2E_VIEWER_TOKEN).get(`/resyncs/${id}`);
          return res.body.state === "succeeded" ? res.body : null;
        },
        { what: "the resync to finish" },
      );
      expect(op).toMatchObject({ enqueued, total: enqueued });
    }
    await h.waitForIdle();
    expect((await reconcile(true)).counts).toEqual({ ...COUNTS_ZERO, orphans: 1 });
  });

  it("the CLI reads the same status over HTTP (exit 0 when idle)", async () => {
    await h.waitForIdle();
    const out: string[] = [];
    const io = {
      stdout: (t: string) => out.push(t),
      stderr: (t: string) => out.push(t),
      env: {},
      fetch: globalThis.fetch,
    };
    expect(
      await runAdminCommand("status", ["--url", h.bridge.url!, "--token", E2E_ADMIN_TOKEN, "--json"], io),
    ).toBe(0);
    expect(JSON.parse(out.join(""))).toMatchObject({ idle: true });
    expect(await runAdminCommand("status", ["--url", h.bridge.url!, "--token", "okta-token"], io)).toBe(1);
  });
});
