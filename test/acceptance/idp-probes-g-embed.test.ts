/**
 * Acceptance probes (round g), end to end, for an embed-tenant source: members are embed users
 * identified by the SCIM externalId, or the userName when there is none (docs/ARCHITECTURE.md).
 * Identity providers add an externalId later (Okta once the app's profile maps one, Entra when
 * matching moves to objectId), change it, and rename users: each time the embed group must hold the
 * person under the identity the bridge derives now, and no longer under the old one.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type TestBridge, startTestBridge } from "../helpers/bridge-harness.js";

let h: TestBridge;

beforeAll(async () => {
  h = await startTestBridge("acceptance-idp-probes-g-embed", {
    sources: {
      okta: { tokens: ["okta-token"], target: { embedTenant: "acme" } },
      portal: {
        tokens: ["portal-token"],
        target: { embedTenantFromGroup: { pattern: "^tenant-([A-Za-z0-9]+)-" } },
      },
    },
  });
});
afterAll(async () => {
  await h?.close();
});

type Tenant = { name: string; groups: Array<{ id: string; name: string; members: string[] }> };
const groupMembers = (name: string) => {
  const tenants = (h.emulator.state() as unknown as { embedTenants: Tenant[] }).embedTenants;
  const groups = tenants.find((t) => t.name === "acme")?.groups.filter((g) => g.name === name) ?? [];
  expect(groups, `embed groups named ${name}`).toHaveLength(1);
  return [...(groups[0]?.members ?? [])].sort();
};
const tenantUsers = () =>
  (
    h.emulator.state() as unknown as { embedTenants: Array<{ name: string; users: unknown[] }> }
  ).embedTenants.find((t) => t.name === "acme")?.users ?? [];
let n = 0;
const uniq = (stem: string) => `${stem}.e${++n}@example.com`;

async function expectClean() {
  const status = await h.admin().get("/status");
  expect(status.body.deadLetters, JSON.stringify(status.body)).toBe(0);
  expect(h.emulator.violations()).toEqual([]);
}

describe("embed members follow the identity the bridge derives", () => {
  it("an externalId added later, then changed: the group holds the person once, under the newest id", async () => {
    const okta = h.scim("okta");
    const [a, b] = [await okta.createUser(uniq("ext.a")), await okta.createUser(uniq("ext.b"))];
    await okta.createGroup(`Ext ${n}`, [a.id, b.id]);
    await h.waitForIdle();
    const name = `Ext ${n}`;
    expect(groupMembers(name)).toEqual([a.userName, b.userName].sort());

    await okta.patchUser(a.id, [{ op: "add", path: "externalId", value: "00u-a-1" }]);
    await h.waitForIdle();
    expect(groupMembers(name)).toEqual(["00u-a-1", b.userName].sort());

    await okta.patchUser(a.id, [{ op: "replace", path: "externalId", value: "00u-a-2" }]);
    await h.waitForIdle();
    expect(groupMembers(name)).toEqual(["00u-a-2", b.userName].sort());

    await okta.patchUser(a.id, [{ op: "remove", path: "externalId" }]);
    await h.waitForIdle();
    expect(groupMembers(name)).toEqual([a.userName, b.userName].sort());
    await expectClean();
  });

  it("a user without externalId renamed: the group drops the old userName and holds the new one", async () => {
    const okta = h.scim("okta");
    const u = await okta.createUser(uniq("ren"));
    await okta.createGroup(`Ren ${n}`, [u.id]);
    const name = `Ren ${n}`;
    await h.waitForIdle();
    const renamed = uniq("ren.new");
    await okta.patchUser(u.id, [{ op: "replace", path: "userName", value: renamed }]);
    await h.waitForIdle();
    expect(groupMembers(name)).toEqual([renamed]);
    await expectClean();
  });

  it("a userName changed in case only (no externalId) is the same person: the same embed user stays in the group, none is added", async () => {
    // RFC 7643 §4.1.1: userName is caseExact false; a workspace user renamed in case only keeps its
    // platform user (idp-lifecycle-e2e), and an embed user must keep its identity likewise.
    const okta = h.scim("okta");
    const mixed = `Case.Only.e${++n}@Example.com`;
    const u = await okta.createUser(mixed, { displayName: "Case Only" });
    await okta.createGroup(`Case ${n}`, [u.id]);
    const name = `Case ${n}`;
    await h.waitForIdle();
    expect(groupMembers(name)).toEqual([mixed]);
    const embedUsersBefore = tenantUsers().length;

    await okta.patchUser(u.id, [{ op: "replace", path: "userName", value: mixed.toLowerCase() }]);
    await h.waitForIdle();
    expect(groupMembers(name)).toEqual([mixed]);
    expect(tenantUsers()).toHaveLength(embedUsersBefore);

    // a real rename still moves the identity (docs/ARCHITECTURE.md: the userName when there is no externalId)
    const renamed = uniq("case.renamed");
    await okta.patchUser(u.id, [{ op: "replace", path: "userName", value: renamed }]);
    await h.waitForIdle();
    expect(groupMembers(name)).toEqual([renamed]);
    await expectClean();
  });

  it("an externalId changed and the user deactivated in quick succession: out of the group under both ids; reactivated: back under the new one", async () => {
    const okta = h.scim("okta");
    const u = await okta.createUser(uniq("quick"), { externalId: "00u-q-1" });
    const other = await okta.createUser(uniq("quick.other"), { externalId: "00u-q-o" });
    await okta.createGroup(`Quick ${n}`, [u.id, other.id]);
    const name = `Quick ${n}`;
    await h.waitForIdle();
    await okta.patchUser(u.id, [{ op: "replace", path: "externalId", value: "00u-q-2" }]);
    await okta.patchUser(u.id, [{ op: "replace", path: "active", value: false }]);
    await h.waitForIdle();
    expect(groupMembers(name)).toEqual(["00u-q-o"]);
    await okta.patchUser(u.id, [{ op: "replace", path: "active", value: true }]);
    await h.waitForIdle();
    expect(groupMembers(name)).toEqual(["00u-q-2", "00u-q-o"]);
    await expectClean();
  });

  it("two groups; a member deleted before either group's first sync is in neither", async () => {
    const okta = h.scim("okta");
    const [a, b] = [await okta.createUser(uniq("two.a")), await okta.createUser(uniq("two.b"))];
    await okta.createGroup(`Two-1 ${n}`, [a.id, b.id]);
    await okta.createGroup(`Two-2 ${n}`, [b.id]);
    await okta.deleteUser(b.id);
    await h.waitForIdle();
    expect(groupMembers(`Two-1 ${n}`)).toEqual([a.userName]);
    expect(groupMembers(`Two-2 ${n}`)).toEqual([]);
    await expectClean();
  });
});

describe("a leaver re-hired at once", () => {
  it("deleted and created again under the same userName, added back to the group before any sync: in the group once", async () => {
    const okta = h.scim("okta");
    const userName = uniq("rehired");
    const old = await okta.createUser(userName);
    const other = await okta.createUser(uniq("rehired.other"));
    const g = await okta.createGroup(`Rehired ${n}`, [old.id, other.id]);
    const name = `Rehired ${n}`;
    await okta.deleteUser(old.id);
    const again = await okta.createUser(userName);
    await okta.patchGroup(g.id, [{ op: "add", path: "members", value: [{ value: again.id }] }]);
    await h.waitForIdle();
    expect(groupMembers(name)).toEqual([userName, other.userName].sort());
    await expectClean();
  });
});

describe("embed group names freed and taken at once", () => {
  it("one group deleted and another renamed onto its name; a third renamed away and its name taken by a new group", async () => {
    const okta = h.scim("okta");
    const [a, b, c, d] = await Promise.all([0, 1, 2, 3].map((i) => okta.createUser(uniq(`free${i}`))));
    const name1 = `Freed one ${++n}`;
    const name2 = `Freed two ${n}`;
    const gone = await okta.createGroup(name1, [a!.id]);
    const mover = await okta.createGroup(`${name1} next`, [b!.id]);
    const away = await okta.createGroup(name2, [c!.id]);
    await h.waitForIdle();
    await okta.deleteGroup(gone.id);
    await okta.patchGroup(mover.id, [{ op: "replace", path: "displayName", value: name1 }]);
    await okta.patchGroup(away.id, [{ op: "replace", path: "displayName", value: `${name2} old` }]);
    await okta.createGroup(name2, [d!.id]);
    await h.waitForIdle();
    expect(groupMembers(name1)).toEqual([b!.userName]);
    expect(groupMembers(`${name2} old`)).toEqual([c!.userName]);
    expect(groupMembers(name2)).toEqual([d!.userName]);
    await expectClean();
  });
});

describe("tenants derived from group names (embedTenantFromGroup)", () => {
  const tenantGroups = (tenant: string) =>
    (h.emulator.state() as unknown as { embedTenants: Tenant[] }).embedTenants.find((t) => t.name === tenant)
      ?.groups ?? [];

  it("a group renamed in case only stays in its tenant, renamed; one renamed into another tenant moves there with its members", async () => {
    const portal = h.scim("portal");
    const [a, b] = [
      await portal.createUser(uniq("tn.a")),
      await portal.createUser(uniq("tn.b"), { externalId: "tn-b" }),
    ];
    const stem = `${++n}`;
    const g = await portal.createGroup(`tenant-Globex-admins-${stem}`, [a.id, b.id]);
    await h.waitForIdle();
    expect(tenantGroups("globex").filter((x) => x.name === `tenant-Globex-admins-${stem}`)).toHaveLength(1);

    await portal.patchGroup(g.id, [
      { op: "replace", path: "displayName", value: `tenant-GLOBEX-Admins-${stem}` },
    ]);
    await h.waitForIdle();
    const inGlobex = tenantGroups("globex").filter(
      (x) => x.name.toLowerCase() === `tenant-globex-admins-${stem}`,
    );
    expect(inGlobex.map((x) => x.name)).toEqual([`tenant-GLOBEX-Admins-${stem}`]);
    expect([...inGlobex[0]!.members].sort()).toEqual([a.userName, "tn-b"].sort());

    await portal.patchGroup(g.id, [
      { op: "replace", path: "displayName", value: `tenant-Initech-admins-${stem}` },
    ]);
    await portal.patchUser(b.id, [{ op: "replace", path: "active", value: false }]);
    await h.waitForIdle();
    expect(tenantGroups("globex").filter((x) => x.name.toLowerCase().endsWith(`admins-${stem}`))).toEqual([]);
    const moved = tenantGroups("initech").filter((x) => x.name === `tenant-Initech-admins-${stem}`);
    expect(moved).toHaveLength(1);
    expect(moved[0]!.members).toEqual([a.userName]);
    await expectClean();
  });
});

describe("last: after the traffic above", () => {
  it("a reconciliation finds no drift and a resync writes nothing", async () => {
    await h.waitForIdle();
    const res = await h.admin().post("/sources/okta/reconcile", { dryRun: true });
    expect(res.status).toBe(202);
    let run: { state: string; counts: Record<string, number> } | undefined;
    for (let i = 0; i < 600; i++) {
      run = (await h.admin().get(`/reconcile-runs/${res.body.runId}`)).body;
      if (run && !["queued", "running"].includes(run.state)) break;
      await new Promise((r) => setTimeout(r, 25));
    }
    expect(run, JSON.stringify(run)).toMatchObject({
      state: "succeeded",
      counts: {
        missing: 0,
        changed: 0,
        activeMismatch: 0,
        membership: 0,
        attributeValues: 0,
        deletedBehind: 0,
        orphans: 0,
      },
    });
    const writes = h.emulator.counters().writes;
    expect((await h.admin().post("/sources/okta/resync", {})).status).toBe(202);
    await h.waitForIdle();
    expect(h.emulator.counters().writes).toBe(writes);
    await expectClean();
  });
});
