/**
 * The platform asks for a pause longer than a minute (503 with `Retry-After: 120`) while another
 * user's sync is between two of its calls. docs/operations.md ("Platform rate limits"): the sync
 * queue waits, jobs `waiting`, none `active`. That running sync's next call must not sit the pause
 * out inside the request budget, holding its job `active` (and its worker slot) for two minutes: it
 * is put back like the job that met the answer, without spending an attempt, and shows `pending`
 * with `platform_rate_limited`.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type TestBridge, USER_SCHEMA, startTestBridge } from "../helpers/bridge-harness.js";
import { waitFor } from "../helpers/redis-test-prefix.js";

const ENT = "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User";

describe("a pause asked for while a sync runs", () => {
  let h: TestBridge;
  beforeAll(async () => {
    h = await startTestBridge("pause-running-sync", {
      sources: {
        okta: {
          tokens: ["okta-token"],
          attributes: { department: { from: `${ENT}:department`, type: "string" } },
        },
      },
    });
  });
  afterAll(async () => {
    await h?.close();
  });

  it("puts the running sync back at its next call instead of holding it active", async () => {
    const scim = h.scim("okta");
    const withDept = (dept: string) => ({ schemas: [USER_SCHEMA, ENT], [ENT]: { department: dept } });
    const running = await scim.createUser("pause.running@example.com", withDept("R&D"));
    const asking = await scim.createUser("pause.asking@example.com");
    await h.waitForIdle();
    const runningPid = h.platformUsers().get("pause.running@example.com")?.id as string;
    const askingPid = h.platformUsers().get("pause.asking@example.com")?.id as string;
    h.emulator.setFaults([
      // Every call of the running user's sync takes a while: the pause comes between two of them.
      { type: "slow", delayMs: 1_500, match: { method: "PATCH", path: `/api/scim/v2/Users/${runningPid}` } },
      { type: "slow", delayMs: 1_500, match: { path: "/api/v1/user-attribute-values/**" } },
      {
        type: "error",
        status: 503,
        retryAfterSeconds: 120,
        match: { method: "PATCH", path: `/api/scim/v2/Users/${askingPid}` },
      },
    ]);
    // Two calls: the rename, and the department's value.
    expect(
      (
        await scim.patchUser(running.id, [
          { op: "replace", path: "displayName", value: "Running Renamed" },
          { op: "replace", path: `${ENT}:department`, value: "Sales" },
        ])
      ).status,
    ).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(
      (await scim.patchUser(asking.id, [{ op: "replace", path: "displayName", value: "Asking" }])).status,
    ).toBe(200);

    const userStatus = async (id: string) => (await h.admin().get(`/sources/okta/users/${id}`)).body;
    await waitFor(async () => ((await userStatus(asking.id)).lastError ? true : undefined), {
      timeoutMs: 10_000,
      what: "the asking user's sync to meet the 503",
    });
    // Well inside the 120 s pause: nothing active, the running user's sync put back.
    const settled = await waitFor(
      async () => {
        const status = (await h.admin().get("/status")).body;
        const active = (status.queues?.sync?.active ?? 0) as number;
        const user = await userStatus(running.id);
        return active === 0 && user.lastError ? { status, running: user } : undefined;
      },
      { timeoutMs: 10_000, what: "no sync job active during the pause" },
    );
    expect(settled.running).toMatchObject({
      state: "pending",
      lastError: { code: "platform_rate_limited" },
    });
    expect(settled.status.pausedQueues).toEqual([{ queue: "sync", until: expect.any(String) }]);
    expect(settled.status.deadLetters).toBe(0);
  }, 60_000);
});
