/**
 * A leaver left in (found by the chaos-guard probe, seed 53 at CHAOS_SHARE 0.2): a user inactive at
 * the source and on the platform is turned on again on the platform behind the bridge's back, and the
 * identity provider deletes the user before any resync or reconciliation (onDelete: deactivate). The
 * record said "inactive", so the deletion planned no write and forgot the user: the platform user
 * stayed active, owned by no source, and reconciliation (orphans: report) only reported it.
 *
 * The deletion of a user recorded inactive now reads the platform user first (sync-user.ts,
 * `lastLook`). Where the platform agrees with the record, that read is all: no write call.
 *
 * Also here: a user renamed on the platform behind the bridge's back, then deleted at the source, is
 * deactivated all the same (by its platform id).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  MANUAL_RECONCILE,
  PLATFORM_TOKEN,
  type TestBridge,
  startTestBridge,
} from "../helpers/bridge-harness.js";
import { waitFor } from "../helpers/redis-test-prefix.js";

let h: TestBridge;

beforeAll(async () => {
  h = await startTestBridge("deleted-after-drift-behind", {
    sources: { okta: { tokens: ["okta-token"], onDelete: "deactivate" } },
    config: { reconcile: { ...MANUAL_RECONCILE } },
  });
  await h.start();
});
afterAll(async () => {
  await h?.close();
});

type PlatformUser = { id: string; userName: string; active: boolean };
const named = (userName: string) =>
  (h.emulator.state() as unknown as { users: PlatformUser[] }).users.filter(
    (u) => u.userName.toLowerCase() === userName.toLowerCase(),
  );

/** Creates an inactive user and waits until its platform user is there, inactive. */
async function inactiveUser(userName: string): Promise<{ id: string; platformId: string }> {
  const u = await h.scim("okta").createUser(userName, { active: false });
  await h.waitForIdle();
  const platform = named(userName);
  expect(platform.map((p) => p.active)).toEqual([false]);
  return { id: u.id, platformId: platform[0]!.id };
}

describe("a user renamed on the platform behind the bridge's back, then deleted at the source", () => {
  it("is deactivated by its platform id (the name given behind the bridge's back is not repaired)", async () => {
    const userName = "renamed.behind.then.deleted@example.com";
    const u = await h.scim("okta").createUser(userName);
    await h.waitForIdle();
    const [p] = named(userName);
    expect(p?.active).toBe(true);
    const renamed = await fetch(`${h.platformUrl}/api/scim/v2/Users/${p!.id}`, {
      method: "PATCH",
      headers: { Authorization: `Bearer ${PLATFORM_TOKEN}`, "Content-Type": "application/scim+json" },
      body: JSON.stringify({
        schemas: ["urn:ietf:params:scim:api:messages:2.0:PatchOp"],
        Operations: [{ op: "replace", path: "userName", value: "drift-0@x.test" }],
      }),
    });
    expect(renamed.status).toBe(200);

    expect((await h.scim("okta").deleteUser(u.id)).status).toBe(204);
    await h.waitForIdle();
    // A leaver's deletion deprovisions it and lets it go: it writes no profile.
    expect(named("drift-0@x.test")).toMatchObject([{ id: p!.id, active: false }]);
    expect(await h.admin().get("/status")).toMatchObject({ body: { idle: true, deadLetters: 0 } });
    expect(h.emulator.violations()).toEqual([]);
  }, 60_000);
});

describe("a deleted user whose record says inactive (onDelete: deactivate)", () => {
  it("turned on again on the platform behind the bridge's back: the deletion deactivates it", async () => {
    const userName = "reactivated.behind.then.deleted@example.com";
    const u = await inactiveUser(userName);
    h.emulator.drift({ action: "setUserActive", userId: u.platformId, active: true });
    expect(named(userName).map((p) => p.active)).toEqual([true]);

    expect((await h.scim("okta").deleteUser(u.id)).status).toBe(204);
    await h.waitForIdle();
    expect(named(userName).map((p) => p.active)).toEqual([false]);

    // A reconciliation afterwards finds the released platform user as an orphan, inactive.
    const rec = await h.admin().post("/sources/okta/reconcile", { dryRun: false });
    expect(rec.status).toBe(202);
    await waitFor(
      async () => {
        const b = (await h.admin().get(`/reconcile-runs/${rec.body.runId}`)).body;
        return ["succeeded", "failed", "awaiting-confirmation"].includes(b.state) ? b : undefined;
      },
      { timeoutMs: 20_000, what: "the reconciliation" },
    );
    await h.waitForIdle();
    expect(named(userName).map((p) => p.active)).toEqual([false]);
    expect(h.emulator.violations()).toEqual([]);
  }, 60_000);

  it("inactive on the platform too: the deletion reads it and writes nothing", async () => {
    const userName = "inactive.then.deleted@example.com";
    const u = await inactiveUser(userName);
    const before = h.emulator.counters().writes;
    const reads = h.emulator.count("getUser");

    expect((await h.scim("okta").deleteUser(u.id)).status).toBe(204);
    await h.waitForIdle();
    expect(named(userName).map((p) => p.active)).toEqual([false]);
    expect(h.emulator.counters().writes - before).toBe(0);
    expect(h.emulator.count("getUser") - reads).toBe(1);
    expect(await h.admin().get("/status")).toMatchObject({ body: { idle: true, deadLetters: 0 } });
  }, 60_000);

  it("deleted on the platform behind the bridge's back: the deletion forgets it, no write, no letter", async () => {
    const userName = "gone.behind.then.deleted@example.com";
    const u = await inactiveUser(userName);
    expect(h.emulator.data.deleteUser(u.platformId)).toBe(true);
    const before = h.emulator.counters().writes;

    expect((await h.scim("okta").deleteUser(u.id)).status).toBe(204);
    await h.waitForIdle();
    expect(named(userName)).toEqual([]);
    expect(h.emulator.counters().writes - before).toBe(0);
    expect(await h.admin().get("/status")).toMatchObject({ body: { idle: true, deadLetters: 0 } });
    expect(h.emulator.violations()).toEqual([]);
  }, 60_000);
});
