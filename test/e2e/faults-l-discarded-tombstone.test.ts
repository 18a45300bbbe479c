/**
 * Faults-l: a deleted user whose deprovisioning failed for good (its dead letter), then that letter
 * discarded by an admin. The admin gives up on deprovisioning it: the bridge lets go of its platform
 * user, which stays exactly as it is (never deprovisioned, never changed by the discard), and a user
 * given that userName again is no longer held back by a letter that is gone. End to end (the whole
 * bridge, the strict emulator over HTTP).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type TestBridge, startTestBridge } from "../helpers/bridge-harness.js";
import { Redis } from "ioredis";
import { TEST_REDIS_URL, redisTraces, waitFor } from "../helpers/redis-test-prefix.js";

let h: TestBridge;
const redis = new Redis(TEST_REDIS_URL, { lazyConnect: true });

beforeAll(async () => {
  h = await startTestBridge("faults-l-discarded-tombstone", {
    sources: { okta: { tokens: ["okta-token"] } },
  });
  await redis.connect();
});
afterAll(async () => {
  await h?.close();
  await redis.quit();
});

type Letter = { ref: { source: string; kind: string; id: string }; code: string };
const letters = async () => (await h.admin().get("/dead-letters")).body.items as Letter[];
const hasLetter = async (id: string) => (await letters()).some((l) => l.ref.id === id);

/** A user deleted at the source whose deprovisioning the platform refuses for good: its id and platform id. */
async function deadTombstone(userName: string): Promise<{ id: string; pid: string }> {
  const okta = h.scim("okta");
  const old = await okta.createUser(userName, { displayName: "Old" });
  await h.waitForIdle();
  const pid = h.platformUsers().get(userName)?.id as string;
  h.emulator.drift({ action: "failBulkFor", userId: pid, code: "FORBIDDEN" });
  expect((await okta.deleteUser(old.id)).status).toBe(204);
  await waitFor(() => hasLetter(old.id), { what: "the old user's letter" });
  await h.waitForIdle();
  return { id: old.id, pid };
}

describe("faults-l: a deleted user's dead letter discarded", () => {
  it("a user given its userName again, dead-lettered as a conflict before the discard: retried, it adopts the platform user", async () => {
    const okta = h.scim("okta");
    const old = await deadTombstone("discarded.l@example.com");
    const again = await okta.createUser("discarded.l@example.com", { displayName: "Again" });
    await waitFor(() => hasLetter(again.id), { timeoutMs: 15_000, what: "the new user's letter" });
    await h.waitForIdle();
    expect((await letters()).find((l) => l.ref.id === again.id)?.code).toBe("ownership_conflict");

    expect((await h.admin().delete(`/dead-letters/okta/user/${old.id}`)).status).toBe(200);
    await h.waitForIdle();
    // The discard changes nothing on the platform: the user is neither deprovisioned nor edited.
    expect(h.platformUsers().get("discarded.l@example.com")).toMatchObject({
      id: old.pid,
      active: true,
      displayName: "Old",
    });
    // The deleted user is forgotten (invariant 6), and holds the name no more.
    expect((await h.admin().get(`/sources/okta/users/${old.id}`)).status).toBe(404);
    // Only the audit log still names it (who discarded what).
    const traces = await redisTraces(redis, h.prefix, [old.id]);
    expect(traces.filter((trace) => !trace.startsWith(`${h.prefix}:admin:audit`))).toEqual([]);

    expect((await h.admin().post(`/dead-letters/okta/user/${again.id}/retry`)).status).toBeLessThan(300);
    await h.waitForIdle();
    expect(h.platformUsers().get("discarded.l@example.com")).toMatchObject({
      id: old.pid,
      active: true,
      displayName: "Again",
    });
    expect((await h.admin().get(`/sources/okta/users/${again.id}`)).body).toMatchObject({
      state: "synced",
      platformId: old.pid,
    });
    expect((await letters()).filter((l) => [old.id, again.id].includes(l.ref.id))).toEqual([]);
  }, 60_000);

  it("a user given its userName after the discard: it adopts the platform user, with no letter", async () => {
    const okta = h.scim("okta");
    const old = await deadTombstone("discarded2.l@example.com");
    expect((await h.admin().delete(`/dead-letters/okta/user/${old.id}`)).status).toBe(200);
    await h.waitForIdle();
    const again = await okta.createUser("discarded2.l@example.com", { displayName: "Again 2" });
    await h.waitForIdle();
    expect(h.platformUsers().get("discarded2.l@example.com")).toMatchObject({
      id: old.pid,
      displayName: "Again 2",
    });
    expect(await hasLetter(again.id)).toBe(false);
    expect((await h.admin().get("/status")).body).toMatchObject({ idle: true, deadLetters: 0 });
  }, 60_000);
});
