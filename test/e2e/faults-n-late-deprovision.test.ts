/**
 * Faults-n: a deleted user's deprovisioning lands late on a platform user that another entity of
 * the source has adopted since. onDelete deactivate: the identity provider deletes a user and
 * creates it again under the same userName (a rehire, an HR system's delete-and-recreate). The
 * bulk DEACTIVATE of the old one times out on the client and is held by the platform; the client's
 * retry is answered, the old entity is forgotten, and the new one adopts the deactivated platform
 * user (its create met a 409) and activates it. Then the held DEACTIVATE lands: the new user,
 * which its source wants active, is locked out. The platform user is read again once the late
 * write could have landed, as for any write of the entity that owns it now.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type TestBridge, startProxiedBridge } from "../helpers/bridge-harness.js";
import type { FaultProxy } from "../helpers/fault-proxy.js";
import { waitFor } from "../helpers/redis-test-prefix.js";

const TIMEOUT_MS = 1_500;
/** Later than the client waits, sooner than the late-write check (twice the timeout). */
const LATE_MS = 2_700;
const BULK_PATH = "/api/v1/users/bulk";

let h: TestBridge;
/** Passes everything on and records the calls (their order against the late one). */
let proxy: FaultProxy;

beforeAll(async () => {
  ({ h, proxy } = await startProxiedBridge("faults-n-late-deprovision", {
    sources: { okta: { tokens: ["okta-token"] } },
    timeoutMs: TIMEOUT_MS,
    maxRetries: 4,
  }));
});
afterAll(async () => {
  await h?.close();
  await proxy?.close();
});

type PlatformUser = { id: string; userName: string; active: boolean };
const named = (userName: string) =>
  (h.emulator.state() as unknown as { users: PlatformUser[] }).users.filter(
    (u) => u.userName.toLowerCase() === userName.toLowerCase(),
  );
const lateLanded = (since: number) =>
  h.emulator.requests().some((r) => r.seq > since && r.operation === "bulkUsers" && r.fault === "late");
const status = async () => (await h.admin().get("/status")).body as { idle: boolean; deadLetters: number };
/** Whether a bulk `action` naming `pid` was answered 200. */
const answered = (action: string, pid: string) =>
  proxy.calls.some(
    (c) =>
      c.path === BULK_PATH &&
      c.status === 200 &&
      (c.body as { action: string }).action === action &&
      (c.body as { userIds: string[] }).userIds.includes(pid),
  );

describe("faults-n: a deprovisioning that lands late on a platform user adopted since", () => {
  it("deleted and created again under the same userName (onDelete deactivate): the new user ends active", async () => {
    const userName = "rehire.late.n@example.com";
    const okta = h.scim("okta");
    const old = await okta.createUser(userName);
    await h.waitForIdle();
    const pid = named(userName)[0]?.id as string;
    const since = h.emulator.requests().at(-1)?.seq ?? 0;
    h.emulator.addFault({ type: "late", delayMs: LATE_MS, count: 1, match: { operation: "bulkUsers" } });
    expect((await okta.deleteUser(old.id)).status).toBe(204);
    // The retry's DEACTIVATE is answered (the first is still held): the identity provider creates
    // the user again.
    await waitFor(() => answered("DEACTIVATE", pid), { what: "the retry's DEACTIVATE" });
    expect(lateLanded(since)).toBe(false);
    const fresh = await okta.createUser(userName);
    await waitFor(() => lateLanded(since), { what: "the late DEACTIVATE to land" });
    await h.waitForIdle();
    expect(named(userName).map((u) => ({ id: u.id, active: u.active }))).toEqual([{ id: pid, active: true }]);
    expect(await status()).toMatchObject({ idle: true, deadLetters: 0 });
    expect((await h.admin().get(`/sources/okta/users/${fresh.id}`)).body).toMatchObject({
      state: "synced",
      platformId: pid,
    });
    expect((await h.admin().get(`/sources/okta/users/${old.id}`)).status).toBe(404);
  }, 30_000);
});
