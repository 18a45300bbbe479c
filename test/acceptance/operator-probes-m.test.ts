/**
 * Probes m (the operator's surface): what landed today, seen from the operator's side.
 *
 * Late writes: a platform write is marked in Redis (P:writing) before it is sent; a process that
 * dies with it on the wire leaves the mark, and the bridge is not idle (and the entity's deletion
 * waits) until the mark is due, up to twice platform.timeoutMs later. An operator who sees
 * `idle: false` must be able to read why, and until when, from the admin API, the CLI and /metrics.
 */
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { refKey } from "../../src/scim/scim-types.js";
import { syncKeys } from "../../src/sync/sync-keys.js";
import { runCli } from "../helpers/admin-cli.js";
import { type TestBridge, startTestBridge } from "../helpers/bridge-harness.js";
import { TEST_REDIS_URL, waitFor } from "../helpers/redis-test-prefix.js";

let h: TestBridge;
let redis: Redis;

beforeAll(async () => {
  h = await startTestBridge("probes-m");
  redis = new Redis(TEST_REDIS_URL);
}, 30_000);
afterAll(async () => {
  await redis?.quit();
  await h?.close();
});

describe("probes m: a write left on the wire by a process that died", () => {
  it("status says why the bridge is not idle and until when; the user's deletion says it waits, and until when", async () => {
    const id = (await h.scim("okta").createUser("late.mark@example.com")).id;
    await h.waitForIdle();
    const ref = { source: "okta", kind: "user" as const, id };
    // A process died with a write of this user on the wire: its mark stays until it is due.
    const dueAt = Date.now() + 120_000;
    await redis.zadd(syncKeys.writing(h.prefix), String(dueAt), `${refKey(ref)}|crashed-write`);
    try {
      const status = await h.admin().get("/status");
      expect(status.body.idle).toBe(false);
      expect(status.body.lateWrites).toEqual({ count: 1, until: new Date(dueAt).toISOString() });

      const cli = await runCli(h.bridge.url as string, ["status"]);
      expect(cli.code).toBe(1);
      expect(cli.stdout).toContain(
        `late writes: 1 may still land on the platform (checked by ${new Date(dueAt).toISOString()})`,
      );

      const metrics = await h.http.get("/metrics");
      expect(metrics.text).toMatch(/^late_writes 1$/m);

      // The identity provider deletes the user: its deprovisioning waits for the late write.
      expect((await h.scim("okta").deleteUser(id)).status).toBe(204);
      const entity = await waitFor(
        async () => {
          const res = await h.admin().get(`/sources/okta/users/${id}`);
          return res.body.lastError?.code === "waiting_for_late_write" ? res.body : undefined;
        },
        { timeoutMs: 15_000, what: "the deletion to wait for the late write" },
      );
      expect(entity.state).toBe("pending");
      expect(entity.lateWriteUntil).toBe(new Date(dueAt).toISOString());
      // The reason speaks of what waits (a deletion, not a create), and until when.
      expect(entity.lastError.message).not.toMatch(/create/);
      expect(entity.lastError.message).toContain(`until ${new Date(dueAt).toISOString()}`);
      const one = await runCli(h.bridge.url as string, ["status", `okta/user/${id}`]);
      expect(one.stdout).toContain(
        `late write:   may still land; waits until ${new Date(dueAt).toISOString()}`,
      );
    } finally {
      await redis.zrem(syncKeys.writing(h.prefix), `${refKey(ref)}|crashed-write`);
    }
    await h.waitForIdle();
    // The description an operator's client is generated from names both fields.
    const spec = (await h.http.get("/admin/v1/openapi.json")).body;
    const schemaOf = (path: string) =>
      spec.paths[path].get.responses["200"].content["application/json"].schema;
    expect(Object.keys(schemaOf("/status").properties)).toContain("lateWrites");
    expect(Object.keys(schemaOf("/sources/{source}/users/{id}").properties)).toContain("lateWriteUntil");
    const after = await h.admin().get("/status");
    expect(after.body.lateWrites).toEqual({ count: 0, until: null });
  }, 60_000);
});
