/**
 * Review l1: a deleted group's dead letter discarded (AdminService.releaseTombstone), for a
 * workspace group and an embed-tenant group (faults-l covers a user): the platform's refusal of the
 * deletion is permanent (403), the admin discards the letter, and no key of the group is left
 * (invariant 6); a group given that name again syncs with no letter.
 */
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type TestBridge, startTestBridge } from "../helpers/bridge-harness.js";
import { TEST_REDIS_URL, redisTraces, waitFor } from "../helpers/redis-test-prefix.js";

let h: TestBridge;
const redis = new Redis(TEST_REDIS_URL, { lazyConnect: true });

beforeAll(async () => {
  h = await startTestBridge("review-l1-group-tomb", {
    sources: {
      okta: { tokens: ["okta-token"] },
      acme: { tokens: ["acme-token"], target: { embedTenant: "rl1" } },
    },
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

describe("review-l1: discarding a deleted group's letter", () => {
  for (const [source, op] of [
    ["okta", "deleteGroup"],
    ["acme", "deleteEmbedGroup"],
  ] as const) {
    it(`${source}: the group's keys go, and a group given the name again adopts the platform group`, async () => {
      const scim = h.scim(source);
      const u = await scim.createUser(`m-${source}@example.com`);
      const old = await scim.createGroup(`Doomed ${source}`, [u.id]);
      await h.waitForIdle();
      h.emulator.addFault({ type: "error", status: 403, match: { operation: op } } as never);
      expect((await scim.deleteGroup(old.id)).status).toBe(204);
      await waitFor(() => hasLetter(old.id), { timeoutMs: 15_000, what: "the old group's letter" });
      await h.waitForIdle();
      h.emulator.clearFaults();
      expect((await h.admin().delete(`/dead-letters/${source}/group/${old.id}`)).status).toBe(200);
      await h.waitForIdle();
      const traces = await redisTraces(redis, h.prefix, [old.id]);
      expect(traces.filter((t) => !t.startsWith(`${h.prefix}:admin:audit`))).toEqual([]);
      const again = await scim.createGroup(`Doomed ${source}`, [u.id]);
      await h.waitForIdle();
      expect(await hasLetter(again.id)).toBe(false);
      expect((await h.admin().get(`/sources/${source}/groups/${again.id}`)).body).toMatchObject({
        state: "synced",
      });
    }, 60_000);
  }
});
