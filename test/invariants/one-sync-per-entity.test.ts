import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type TestBridge, startTestBridge } from "../helpers/bridge-harness.js";
import { waitFor } from "../helpers/redis-test-prefix.js";

const USERS = 4;
const CHANGES = 8;

/**
 * Invariants 2 and 3 end to end, seen from the platform: while each user's PATCH is slow, its
 * source keeps changing it. The platform never sees two writes to one user at the same time, does
 * see writes to different users at the same time, and ends with every user's last change (a change
 * that landed during its entity's sync was not lost).
 */
describe("one sync per entity, changes during a sync kept", () => {
  let h: TestBridge;
  beforeAll(async () => {
    h = await startTestBridge("inv-one-sync", {
      sources: { okta: { tokens: ["okta-token"] } },
      config: {
        // The sweeper is far away: only the queue can bring the mid-sync changes in.
        sync: {
          concurrency: 8,
          attempts: 8,
          lifecycleBatchWindowMs: 50,
          sweepIntervalMs: 60_000,
          sweepAfterMs: 120_000,
        },
      },
    });
  });
  afterAll(async () => {
    await h?.close();
  });

  it("no overlapping writes per user, parallel across users, last change wins", async () => {
    const scim = h.scim("okta");
    const ids: string[] = [];
    for (let i = 0; i < USERS; i++)
      ids.push((await scim.createUser(`one${i}@example.com`, { displayName: "v0" })).id);
    await h.waitForIdle();
    h.emulator.addFault({ type: "slow", delayMs: 120, match: { operation: "patchUser" } });
    const seqBefore = Math.max(0, ...h.emulator.requests().map((r) => r.seq));

    await Promise.all(
      ids.map(async (id, i) => {
        for (let v = 1; v <= CHANGES; v++) {
          const res = await scim.patchUser(id, [{ op: "replace", path: "displayName", value: `v${v}` }]);
          expect(res.status).toBe(200);
          // Let the previous change's PATCH get under way before the next change lands.
          if (v % 2 === 0)
            await waitFor(
              () => h.emulator.requests().some((r) => r.seq > seqBefore && r.operation === "patchUser"),
              {
                what: `a PATCH of user ${i}`,
              },
            );
          await new Promise((r) => setTimeout(r, 60));
        }
      }),
    );
    await h.waitForIdle();
    h.emulator.clearFaults();

    const users = h.platformUsers();
    for (let i = 0; i < USERS; i++)
      expect(users.get(`one${i}@example.com`)?.["displayName"]).toBe(`v${CHANGES}`);

    const patches = h.emulator
      .requests()
      .filter((r) => r.seq > seqBefore && r.operation === "patchUser")
      .map((r) => {
        const end = Date.parse(r.time);
        return { path: r.path, start: end - r.durationMs, end };
      });
    expect(patches.length).toBeGreaterThanOrEqual(USERS * 2);
    const overlaps = (a: { start: number; end: number }, b: { start: number; end: number }) =>
      a.start < b.end - 2 && b.start < a.end - 2;
    let parallelAcrossUsers = 0;
    for (let i = 0; i < patches.length; i++) {
      for (let j = i + 1; j < patches.length; j++) {
        const [a, b] = [patches[i]!, patches[j]!];
        if (!overlaps(a, b)) continue;
        expect(a.path, "two writes to one user at the same time").not.toBe(b.path);
        parallelAcrossUsers++;
      }
    }
    expect(parallelAcrossUsers).toBeGreaterThan(0);
  });
});
