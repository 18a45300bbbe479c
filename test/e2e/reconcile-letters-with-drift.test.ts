/**
 * A reconciliation and the dead letters of entities that differ from the platform
 * (docs/operations.md, "Dead letters"). Repairing drift is the run's job: an entity that differs is
 * synced again whatever its letter, so that a refusal whose cause was fixed (a platform rule, a
 * permission) lands at the next run without an admin, as a transient failure does. A refusal that
 * stands is written again and counted again (dead_letters_total, the run `failed` naming it) at
 * each run that finds the entity differing. A transient letter whose entity differs is synced once
 * by the run: its drift repair and the hand-over of transient letters do not both enqueue it (the
 * second enqueue stacked a second sync behind a running one).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  MANUAL_RECONCILE,
  type TestBridge,
  harnessSync,
  startTestBridge,
} from "../helpers/bridge-harness.js";
import { waitFor } from "../helpers/redis-test-prefix.js";

interface Letter {
  ref: { id: string };
  code: string;
  at: string;
}

interface Run {
  state: string;
  repairs: { entities: number; outcome?: { synced: number; failed: number } };
}

describe("a reconciliation syncs again the dead-lettered entities that differ", () => {
  let h: TestBridge;
  beforeAll(async () => {
    h = await startTestBridge("reconcile-letters-drift", {
      sources: { okta: { tokens: ["okta-token"] } },
      config: { sync: harnessSync({ concurrency: 4, attempts: 2 }), reconcile: MANUAL_RECONCILE },
    });
  });
  afterAll(async () => {
    await h?.close();
  });

  const letters = async () => (await h.admin().get("/dead-letters")).body.items as Letter[];
  const reconcile = async (): Promise<Run> => {
    const started = await h.admin().post("/sources/okta/reconcile", { dryRun: false });
    expect(started.status).toBe(202);
    const run = await waitFor(
      async () => {
        const got = (await h.admin().get(`/reconcile-runs/${started.body.runId}`)).body as Run;
        return ["succeeded", "failed", "awaiting-confirmation", "discarded"].includes(got.state)
          ? got
          : undefined;
      },
      { timeoutMs: 40_000, what: "the reconciliation to finish" },
    );
    await h.waitForIdle(30_000);
    return run;
  };
  const deadLettersTotal = async (code: string) => {
    const text = (await h.http.get("/metrics")).text;
    const line = text.split("\n").find((l) => /dead_letters_total\{/.test(l) && l.includes(`code="${code}"`));
    return line ? Number(line.split(" ").pop()) : 0;
  };
  const writesTo = (pid: string) =>
    h.emulator.requests().filter((r) => r.method === "PATCH" && r.path === `/api/scim/v2/Users/${pid}`)
      .length;
  const readsOf = (pid: string) =>
    h.emulator.requests().filter((r) => r.method === "GET" && r.path === `/api/scim/v2/Users/${pid}`).length;

  it("refused: written again while the refusal stands, lands once fixed; transient: synced once", async () => {
    const scim = h.scim("okta");
    const refused = await scim.createUser("drift.refused@example.com");
    const outage = await scim.createUser("drift.outage@example.com");
    await h.waitForIdle();
    const refusedPid = h.platformUsers().get("drift.refused@example.com")?.id as string;
    const outagePid = h.platformUsers().get("drift.outage@example.com")?.id as string;
    const refusal = {
      id: "refusal",
      type: "error" as const,
      status: 400 as const,
      match: { method: "PATCH", path: `/api/scim/v2/Users/${refusedPid}` },
    };
    h.emulator.setFaults([
      refusal,
      {
        id: "outage",
        type: "error",
        status: 503,
        match: { method: "PATCH", path: `/api/scim/v2/Users/${outagePid}` },
      },
    ]);
    const rename = (id: string, displayName: string) =>
      scim.patchUser(id, [{ op: "replace", path: "displayName", value: displayName }]);
    expect((await rename(refused.id, "Refused Renamed")).status).toBe(200);
    expect((await rename(outage.id, "Outage Renamed")).status).toBe(200);
    await waitFor(async () => ((await letters()).length === 2 ? true : undefined), {
      timeoutMs: 40_000,
      what: "both renames to be dead letters",
    });
    await h.waitForIdle(30_000);
    const before = (await letters()).find((l) => l.ref.id === refused.id) as Letter;
    expect(before.code).toBe("platform_bad_request");
    const counted = await deadLettersTotal("platform_bad_request");

    // The outage is over; the refusal stands. A scheduled run (started here over the admin API).
    h.emulator.setFaults([refusal]);
    const outageWrites = writesTo(outagePid);
    const outageReads = readsOf(outagePid);
    const run = await reconcile();
    expect(run.state, JSON.stringify(run)).toBe("failed");
    expect(run.repairs).toMatchObject({ entities: 2, outcome: { synced: 1, failed: 1 } });
    // The outage's user: synced again by one sync (one read, one PATCH), its letter gone.
    expect(h.platformUsers().get("drift.outage@example.com")?.displayName).toBe("Outage Renamed");
    expect(writesTo(outagePid) - outageWrites).toBe(1);
    expect(readsOf(outagePid) - outageReads).toBe(1);
    // The refused user: tried again, its letter written again and counted again.
    const after = (await letters()).find((l) => l.ref.id === refused.id) as Letter;
    expect(after.code).toBe("platform_bad_request");
    expect(Date.parse(after.at)).toBeGreaterThan(Date.parse(before.at));
    expect(await deadLettersTotal("platform_bad_request")).toBe(counted + 1);

    // The platform's rule is fixed: the next run lands the rename, no admin needed.
    h.emulator.setFaults([]);
    const fixed = await reconcile();
    expect(fixed.state, JSON.stringify(fixed)).toBe("succeeded");
    expect(await letters()).toEqual([]);
    expect(h.platformUsers().get("drift.refused@example.com")?.displayName).toBe("Refused Renamed");
    expect((await h.admin().get(`/sources/okta/users/${refused.id}`)).body.state).toBe("synced");
  }, 150_000);
});
