/**
 * Acceptance, end to end: a day of mixed identity-provider traffic (Okta PUT-only updates, Entra
 * quirks, a OneLogin group push) while the platform answers 429s and 5xx, drops connections and
 * loses answers to writes it applied, with the bridge restarted half-way. The platform must end
 * exactly where the directory says: one user per userName, the right active flags and members.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PATCH_SCHEMA, type TestBridge, startTestBridge } from "../helpers/bridge-harness.js";

let h: TestBridge;

beforeAll(async () => {
  h = await startTestBridge("acceptance-faults", {
    seed: 7,
    sources: {
      okta: { tokens: ["okta-token"] },
      entra: { tokens: ["entra-token"] },
      onelogin: { tokens: ["onelogin-token"] },
    },
    faults: [
      { type: "error", status: 503, probability: 0.15 },
      { type: "error", status: 429, retryAfterSeconds: 1, probability: 0.05 },
      { type: "drop", probability: 0.05 },
      { type: "ghost", probability: 0.05, match: { method: "POST" } },
      { type: "ghost", probability: 0.05, match: { method: "PATCH" } },
    ],
  });
});
afterAll(async () => {
  await h?.close();
});

type PlatformState = {
  users: Array<{ id: string; userName: string; active: boolean; name?: { givenName?: string } }>;
  groups: Array<{ displayName: string; members: string[] }>;
};
const state = () => h.emulator.state() as unknown as PlatformState;

describe("mixed IdP traffic under platform faults and a restart", () => {
  it("converges: no duplicates, right active flags, names and members", async () => {
    const okta = h.scim("okta");
    const entra = h.scim("entra");
    const onelogin = h.scim("onelogin");

    const oktaUsers = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        okta.createUser(`okta.${i}@example.com`, { name: { givenName: `O${i}`, familyName: "K" } }),
      ),
    );
    const entraUsers = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        entra.createUser(`entra.${i}@example.com`, { externalId: `aad-${i}` }),
      ),
    );
    const olUsers = await Promise.all(
      Array.from({ length: 10 }, (_, i) => onelogin.createUser(`ol.${i}@example.com`)),
    );

    // Okta PUT-only app: a rename for every user, a deactivation for the first three.
    for (const [i, u] of oktaUsers.entries()) {
      const res = await okta.put(`/Users/${u.id}`, {
        schemas: ["urn:ietf:params:scim:schemas:core:2.0:User"],
        userName: `okta.${i}@example.com`,
        name: { givenName: `Renamed${i}`, familyName: "K" },
        active: i >= 3,
      });
      expect(res.status).toBe(200);
    }

    // Restart half-way through: jobs in flight and queued must survive.
    await h.stop();
    await h.start();

    // Entra: capitalised op, string boolean deactivation for the first two.
    for (const u of entraUsers.slice(0, 2)) {
      const res = await entra.patchUser(u.id, [{ op: "Replace", path: "active", value: "False" }]);
      expect(res.status).toBe(200);
    }

    // OneLogin: an empty group, then members added with display, one removed again.
    const group = await onelogin.createGroup("OL Engineers");
    const add = await onelogin.patchGroup(group.id, [
      { op: "Add", path: "members", value: olUsers.map((u, i) => ({ value: u.id, display: `ol.${i}` })) },
    ]);
    expect([200, 204]).toContain(add.status);
    const remove = await h.http
      .patch(`/scim/v2/onelogin/Groups/${group.id}`)
      .set({ Authorization: "Bearer onelogin-token", "Content-Type": "application/scim+json" })
      .send({
        schemas: [PATCH_SCHEMA],
        Operations: [{ op: "remove", path: "members", value: [{ value: olUsers[0]?.id }] }],
      });
    expect([200, 204]).toContain(remove.status);

    await h.waitForIdle(25_000);

    const { users, groups } = state();
    const byName = new Map<string, PlatformState["users"]>();
    for (const u of users) {
      const key = u.userName.toLowerCase();
      byName.set(key, [...(byName.get(key) ?? []), u]);
    }
    const duplicates = [...byName].filter(([, list]) => list.length > 1).map(([n]) => n);
    expect(duplicates).toEqual([]);
    expect(byName.size).toBe(30);
    for (let i = 0; i < 10; i++) {
      const o = byName.get(`okta.${i}@example.com`)?.[0];
      expect(o?.active, `okta.${i}`).toBe(i >= 3);
      expect(o?.name?.givenName).toBe(`Renamed${i}`);
      expect(byName.get(`entra.${i}@example.com`)?.[0]?.active, `entra.${i}`).toBe(i >= 2);
    }
    const olGroup = groups.find((g) => g.displayName.endsWith("OL Engineers"));
    const expected = olUsers.slice(1).map((_, k) => byName.get(`ol.${k + 1}@example.com`)?.[0]?.id);
    expect([...(olGroup?.members ?? [])].sort()).toEqual([...expected].sort());
    expect(h.emulator.violations()).toEqual([]);
    // The faults did fire (the test proves nothing otherwise).
    const faulted = h.emulator.requests().filter((r) => r.status === 0 || r.status >= 429).length;
    expect(faulted).toBeGreaterThan(5);
    const status = await h.admin().get("/status");
    expect(status.body).toMatchObject({ idle: true, deadLetters: 0 });
  }, 30_000);
});
