/**
 * Probes-g: an embed tenant that disappears on the platform (deleted by its operator with every
 * group in it) and comes back, while the identity provider keeps changing the source's groups and
 * users. The judge: once the bridge is idle, the tenant holds exactly the mapped directory (each
 * group once, its active members, no deactivated one), nothing is a dead letter, and a group
 * deleted at the source leaves nothing of itself in Redis (invariant 6).
 */
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PLATFORM_TOKEN, type TestBridge, startTestBridge } from "../helpers/bridge-harness.js";
import { TEST_REDIS_URL } from "../helpers/redis-test-prefix.js";

describe("probes-g: an embed tenant deleted on the platform and back", () => {
  let h: TestBridge;
  let redis: Redis;
  beforeAll(async () => {
    h = await startTestBridge("probes-g-embed", {
      sources: { portal: { tokens: ["portal-token"], target: { embedTenant: "acme" } } },
    });
    redis = new Redis(TEST_REDIS_URL);
  });
  afterAll(async () => {
    await h?.close();
    await redis?.quit();
  });

  const tenant = () => h.emulator.state().embedTenants.find((t) => t.name === "acme");
  const groupsNamed = (name: string) => (tenant()?.groups ?? []).filter((g) => g.name === name);
  const deleteTenant = async () => {
    const res = await fetch(`${h.platformUrl}/api/v1/embed-tenants/acme`, {
      method: "DELETE",
      headers: { Authorization: `Bearer ${PLATFORM_TOKEN}` },
    });
    expect(res.status).toBe(204);
    expect(tenant()).toBeUndefined();
  };
  const status = async () => (await h.admin().get("/status")).body as { idle: boolean; deadLetters: number };
  const ok = (res: { status: number }, what: string) =>
    expect([200, 204], `${what}: ${res.status}`).toContain(res.status);

  /**
   * The tenant is deleted; the IdP then adds a member to one group, deactivates a member of the
   * other, and renames a third. The admin expects the tenant back with each group once and exactly
   * its active members.
   */
  it("changes after the tenant is gone bring it back with exactly the directory's groups and members", async () => {
    const scim = h.scim("portal");
    const [a, b, c] = await Promise.all(
      ["a", "b", "c"].map((x) => scim.createUser(`emb.${x}@example.com`, { externalId: `ext-${x}` })),
    );
    const g1 = await scim.createGroup("eng", [a!.id, b!.id]);
    const g2 = await scim.createGroup("ops", [a!.id, b!.id]);
    const g3 = await scim.createGroup("sales", [c!.id]);
    await h.waitForIdle();
    expect(groupsNamed("eng")[0]?.members.sort()).toEqual(["ext-a", "ext-b"]);

    await deleteTenant();
    ok(await scim.patchGroup(g1.id, [{ op: "add", path: "members", value: [{ value: c!.id }] }]), "add");
    ok(await scim.patchUser(b!.id, [{ op: "replace", path: "active", value: false }]), "deactivate");
    ok(await scim.patchGroup(g3.id, [{ op: "replace", path: "displayName", value: "sales-emea" }]), "rename");
    await h.waitForIdle(30_000);

    expect(groupsNamed("eng").map((g) => g.members.sort())).toEqual([["ext-a", "ext-c"]]);
    expect(groupsNamed("ops").map((g) => g.members.sort())).toEqual([["ext-a"]]);
    expect(groupsNamed("sales")).toEqual([]);
    expect(groupsNamed("sales-emea").map((g) => g.members)).toEqual([["ext-c"]]);
    expect(tenant()?.groups).toHaveLength(3);
    expect(h.emulator.violations()).toEqual([]);
    expect(await status()).toMatchObject({ idle: true, deadLetters: 0 });
    void g2;
  }, 45_000);

  /**
   * The tenant is deleted and no change follows: a resync of the source (the admin's repair)
   * brings it back. Then the tenant is deleted again and a group is deleted at the source: the
   * admin expects no embed group brought back for it, and no trace of the group in Redis.
   */
  it("a resync brings the tenant back; a group deleted at the source while its tenant is gone leaves no trace", async () => {
    const scim = h.scim("portal");
    const d = await scim.createUser("emb.d@example.com", { externalId: "ext-d" });
    const g = await scim.createGroup("temp", [d.id]);
    await h.waitForIdle();
    const before = groupsNamed("temp")[0]?.id as string;
    expect(before).toBeDefined();

    await deleteTenant();
    const started = await h.admin().post("/sources/portal/resync", {});
    expect(started.status).toBe(202);
    await h.waitForIdle(30_000);
    expect(groupsNamed("temp").map((x) => x.members)).toEqual([["ext-d"]]);
    expect(groupsNamed("eng").map((x) => x.members.sort())).toEqual([["ext-a", "ext-c"]]);
    const second = groupsNamed("temp")[0]?.id as string;

    await deleteTenant();
    expect((await scim.deleteGroup(g.id)).status).toBe(204);
    await h.waitForIdle(30_000);
    expect(groupsNamed("temp")).toEqual([]);
    // Invariant 6: neither embed group the bridge made for it is still recorded as owned.
    const owners = await redis.hgetall(`${h.prefix}:sync:owner:embed`);
    const left = Object.entries(owners).filter(
      ([key, owner]) => owner.includes(g.id) || key.endsWith(`/${before}`) || key.endsWith(`/${second}`),
    );
    expect(left).toEqual([]);
    expect(await status()).toMatchObject({ idle: true, deadLetters: 0 });
  }, 45_000);
});

/**
 * The same for workspace objects: a platform user and a platform group deleted behind the
 * bridge's back are created again by the next sync (a change, or a resync); then both are deleted
 * at the source. The admin expects them deprovisioned, and Redis to hold no owner record naming
 * either entity (invariant 6: keys of deleted entities are removed), neither for the platform
 * objects created first nor for those created again.
 */
describe("probes-g: workspace objects deleted on the platform, created again, then deleted at the source", () => {
  let h: TestBridge;
  let redis: Redis;
  beforeAll(async () => {
    h = await startTestBridge("probes-g-gone", {
      sources: { hr: { tokens: ["hr-token"], onDelete: "delete" } },
    });
    redis = new Redis(TEST_REDIS_URL);
  });
  afterAll(async () => {
    await h?.close();
    await redis?.quit();
  });

  it("leaves no owner record of either entity", async () => {
    const scim = h.scim("hr");
    const u = await scim.createUser("gone.u@example.com", { displayName: "Gone 1" });
    const g = await scim.createGroup("gone-team", [u.id]);
    await h.waitForIdle();
    const firstUser = h.platformUsers().get("gone.u@example.com")?.id as string;
    const firstGroup = h.emulator.state().groups.find((x) => x.displayName === "gone-team")?.id as string;
    for (const path of [`/api/scim/v2/Users/${firstUser}`, `/api/scim/v2/Groups/${firstGroup}`]) {
      const res = await fetch(`${h.platformUrl}${path}`, {
        method: "DELETE",
        headers: { Authorization: `Bearer ${PLATFORM_TOKEN}` },
      });
      expect(res.status).toBe(204);
    }
    expect(
      (await scim.patchUser(u.id, [{ op: "replace", path: "displayName", value: "Gone 2" }])).status,
    ).toBe(200);
    expect((await h.admin().post("/sources/hr/resync", { groups: [g.id] })).status).toBe(202);
    await h.waitForIdle(30_000);
    const again = h.platformUsers().get("gone.u@example.com");
    expect(again?.id).not.toBe(firstUser);
    expect(again?.displayName).toBe("Gone 2");
    const group = h.emulator.state().groups.find((x) => x.displayName === "gone-team");
    expect(group?.id).not.toBe(firstGroup);
    expect(group?.members).toEqual([again?.id]);

    expect((await scim.deleteGroup(g.id)).status).toBe(204);
    expect((await scim.deleteUser(u.id)).status).toBe(204);
    await h.waitForIdle(30_000);
    expect(h.platformUsers().get("gone.u@example.com")).toBeUndefined();
    expect(h.emulator.state().groups.filter((x) => x.displayName === "gone-team")).toEqual([]);
    for (const scope of ["user", "group"]) {
      const owners = await redis.hgetall(`${h.prefix}:sync:owner:${scope}`);
      expect(
        Object.entries(owners).filter(([, owner]) => owner.includes(u.id) || owner.includes(g.id)),
        scope,
      ).toEqual([]);
    }
    expect(h.emulator.violations()).toEqual([]);
  }, 45_000);
});
