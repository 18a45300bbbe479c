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

describe("probes m: a group whose member add the platform refused for good", () => {
  it("the dead letter names the refused members by the bridge's ids (no userNames), and its retry adds them", async () => {
    const okta = h.scim("okta");
    const kept = (await okta.createUser("kept.member@example.com")).id;
    const refused = (await okta.createUser("refused.member@example.com")).id;
    const group = (await okta.createGroup("Refusal Probe", [kept])).id;
    await h.waitForIdle();
    // The platform refuses every member add for good (until the operator fixes it).
    h.emulator.addFault({ type: "error", status: 400, match: { operation: "patchGroup" } });
    const added = await okta.patchGroup(group, [{ op: "add", path: "members", value: [{ value: refused }] }]);
    expect(added.status).toBeLessThan(300);
    const letter = await waitFor(
      async () => {
        const list = await h.admin().get("/dead-letters?source=okta");
        return (list.body.items as Array<{ ref: { id: string }; code: string; reason: string }>).find(
          (l) => l.ref.id === group,
        );
      },
      { timeoutMs: 20_000, what: "the group's dead letter" },
    );
    expect(letter.code).toBe("platform_bad_request");
    expect(letter.reason).toContain("refused to add 1 member(s)");
    // Which member: by the bridge's id, never by its userName.
    expect(letter.reason).toContain(refused);
    expect(letter.reason).not.toContain(kept);
    expect(letter.reason).not.toContain("refused.member@example.com");
    const status = await h.admin().get(`/sources/okta/groups/${group}`);
    expect(status.body.lastError.message).toContain(refused);

    // Fixed on the platform: the retry adds the member, as the reason says.
    h.emulator.clearFaults();
    expect((await h.admin().post(`/dead-letters/okta/group/${group}/retry`)).status).toBeLessThan(300);
    await h.waitForIdle();
    const after = await h.admin().get(`/sources/okta/groups/${group}`);
    expect(after.body.state).toBe("synced");
    const platformGroup = h.emulator
      .state()
      .groups.find((g: { displayName: string }) => g.displayName === "Refusal Probe");
    expect(platformGroup?.members).toHaveLength(2);
  }, 60_000);
});

describe("probes m: a deleted group's dead letter discarded releases its platform group", () => {
  it("the discard's answer, the CLI and the audit log say it was released; the platform group stays", async () => {
    const okta = h.scim("okta");
    const group = (await okta.createGroup("Released Probe", [])).id;
    await h.waitForIdle();
    // The platform refuses the deletion for good.
    h.emulator.addFault({ type: "error", status: 403, match: { operation: "deleteGroup" } });
    expect((await okta.deleteGroup(group)).status).toBe(204);
    await waitFor(
      async () =>
        ((await h.admin().get("/dead-letters")).body.items as Array<{ ref: { id: string } }>).some(
          (l) => l.ref.id === group,
        ),
      { timeoutMs: 15_000, what: "the deleted group's letter" },
    );
    await h.waitForIdle();
    h.emulator.clearFaults();

    const cli = await runCli(h.bridge.url as string, ["dead-letters", "discard", `okta/group/${group}`]);
    expect(cli.code).toBe(0);
    // The operator reads that the platform object was let go, not only that a letter went.
    expect(cli.stdout).toContain(`discarded okta/group/${group}`);
    expect(cli.stdout).toMatch(/released: its platform group stays on the platform, owned by no source/);
    const spec = (await h.http.get("/admin/v1/openapi.json")).body;
    const discardSchema =
      spec.paths["/dead-letters/{source}/{kind}/{id}"].delete.responses["200"].content["application/json"]
        .schema;
    expect(discardSchema.properties.released).toBeDefined();
    const json = await runCli(h.bridge.url as string, ["dead-letters", "list", "--json"]);
    expect(json.stdout).not.toContain(group);

    const audit = await h.admin().get("/audit?limit=500");
    const entry = (audit.body.items as Array<{ action: string; target?: string; details?: object }>).find(
      (e) => e.action === "dead-letters.discard" && e.target === `okta/group/${group}`,
    );
    expect(entry?.details).toEqual({ released: true });
    await h.waitForIdle();
    const platformGroup = h.emulator
      .state()
      .groups.find((g: { displayName: string }) => g.displayName === "Released Probe");
    expect(platformGroup).toBeDefined();
  }, 60_000);
});

describe("probes m: a group whose member removal the platform refused for good", () => {
  it("the dead letter says it was a removal and names the members by the bridge's ids; its retry removes them", async () => {
    const okta = h.scim("okta");
    const stays = (await okta.createUser("stays.member@example.com")).id;
    const leaves = (await okta.createUser("leaves.member@example.com")).id;
    const group = (await okta.createGroup("Removal Probe", [stays, leaves])).id;
    await h.waitForIdle();
    h.emulator.addFault({ type: "error", status: 400, match: { operation: "patchGroup" } });
    const removed = await okta.patchGroup(group, [{ op: "remove", path: `members[value eq "${leaves}"]` }]);
    expect(removed.status).toBeLessThan(300);
    const letter = await waitFor(
      async () => {
        const list = await h.admin().get("/dead-letters?source=okta");
        return (list.body.items as Array<{ ref: { id: string }; code: string; reason: string }>).find(
          (l) => l.ref.id === group,
        );
      },
      { timeoutMs: 20_000, what: "the group's dead letter" },
    );
    expect(letter.code).toBe("platform_bad_request");
    expect(letter.reason).toContain("refused to remove 1 member(s)");
    expect(letter.reason).toContain(leaves);
    expect(letter.reason).not.toContain(stays);
    expect(letter.reason).not.toContain("leaves.member@example.com");

    h.emulator.clearFaults();
    expect((await h.admin().post(`/dead-letters/okta/group/${group}/retry`)).status).toBeLessThan(300);
    await h.waitForIdle();
    expect((await h.admin().get(`/sources/okta/groups/${group}`)).body.state).toBe("synced");
    const platformGroup = h.emulator
      .state()
      .groups.find((g: { displayName: string }) => g.displayName === "Removal Probe");
    expect(platformGroup?.members).toHaveLength(1);
  }, 60_000);
});

describe("probes m: an embed group whose member add the platform refused for good", () => {
  it("the dead letter names the refused members by the bridge's ids, never their externalIds or userNames", async () => {
    const e = await startTestBridge("probes-m-embed", {
      sources: { acme: { tokens: ["acme-token"], target: { embedTenant: "probes-m" } } },
    });
    try {
      const acme = e.scim("acme");
      const kept = (await acme.createUser("kept.embed@example.com")).id;
      const refused = (await acme.createUser("refused.embed@example.com", { externalId: "ext-refused-42" }))
        .id;
      const group = (await acme.createGroup("Embed Refusal", [kept])).id;
      await e.waitForIdle();
      e.emulator.addFault({ type: "error", status: 400, match: { operation: "addEmbedGroupMembers" } });
      const added = await acme.patchGroup(group, [
        { op: "add", path: "members", value: [{ value: refused }] },
      ]);
      expect(added.status).toBeLessThan(300);
      const letter = await waitFor(
        async () =>
          (
            (await e.admin().get("/dead-letters")).body.items as Array<{
              ref: { id: string };
              reason: string;
            }>
          ).find((l) => l.ref.id === group),
        { timeoutMs: 20_000, what: "the embed group's dead letter" },
      );
      expect(letter.reason).toContain("refused to add 1 member(s)");
      expect(letter.reason).toContain(refused);
      expect(letter.reason).not.toContain(kept);
      expect(letter.reason).not.toContain("ext-refused-42");
      expect(letter.reason).not.toContain("refused.embed@example.com");
    } finally {
      await e.close();
    }
  }, 60_000);
});
