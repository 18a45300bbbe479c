/**
 * Probes-i (mapping): embed-tenant sources end to end, as an identity admin and a platform operator
 * meet them. The tenant comes from `target: {embedTenant}` or is derived from the group name
 * (`embedTenantFromGroup`); a user in groups of two tenants; groups renamed inside their tenant and
 * into another; members removed, users deactivated and deleted (every group of the tenant the
 * source owns, nothing of another source's: invariant 5); tenants missing on the platform; names
 * at the contract's limits (group name 200 characters, tenant name 63); invariant 4: a sync of
 * converged state makes zero write calls (the emulator's call log).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PLATFORM_TOKEN, type TestBridge, startTestBridge } from "../helpers/bridge-harness.js";

let h: TestBridge;

beforeAll(async () => {
  h = await startTestBridge("probes-i-mapping-embed", {
    sources: {
      acme: { tokens: ["acme-token"], target: { embedTenant: "acme" } },
      // A second source in the same tenant (invariant 5).
      hr: { tokens: ["hr-token"], target: { embedTenant: "acme" } },
      portal: {
        tokens: ["portal-token"],
        target: { embedTenantFromGroup: { pattern: "^([^/]+)/" } },
      },
      pre: { tokens: ["pre-token"], target: { embedTenant: "pre" }, groupPrefix: "IdP " },
    },
  });
});
afterAll(async () => {
  await h?.close();
});

type Tenant = { name: string; groups: Array<{ id: string; name: string; members: string[] }> };
const tenants = () => (h.emulator.state() as unknown as { embedTenants: Tenant[] }).embedTenants;
const tenantGroups = (tenant: string) => tenants().find((t) => t.name === tenant)?.groups ?? [];
/** The members of the one embed group of that name in the tenant. */
const members = (tenant: string, name: string) => {
  const groups = tenantGroups(tenant).filter((g) => g.name === name);
  expect(groups, `embed groups named ${name} in ${tenant}`).toHaveLength(1);
  return [...(groups[0]?.members ?? [])].sort();
};
const writes = () => h.emulator.counters().writes;
let n = 0;
const uniq = (stem: string) => `${stem}.i${++n}@example.com`;

async function expectClean() {
  const status = await h.admin().get("/status");
  expect(status.body.deadLetters, JSON.stringify(status.body)).toBe(0);
  expect(h.emulator.violations()).toEqual([]);
}

/** A resync of the source re-reads the platform: converged, it writes nothing (invariant 4). */
async function expectResyncWritesNothing(source: string) {
  await h.waitForIdle();
  const before = writes();
  expect((await h.admin().post(`/sources/${source}/resync`, {})).status).toBe(202);
  await h.waitForIdle();
  const after = h.emulator
    .requests()
    .filter((r) => r.method !== "GET")
    .slice(-5);
  expect(writes(), `writes of a converged resync: ${JSON.stringify(after)}`).toBe(before);
}

describe("tenant derived from the group name", () => {
  it("a user in groups of two tenants: deactivated leaves both, reactivated back in both, deleted leaves both", async () => {
    const portal = h.scim("portal");
    const k = ++n;
    const u = await portal.createUser(uniq("two"), { externalId: `two-${k}` });
    const other = await portal.createUser(uniq("two.other"), { externalId: `other-${k}` });
    const ga = `Globex/Admins ${k}`;
    const gb = `Initech/Viewers ${k}`;
    await portal.createGroup(ga, [u.id, other.id]);
    await portal.createGroup(gb, [u.id, other.id]);
    await h.waitForIdle();
    expect(members("globex", ga)).toEqual([`other-${k}`, `two-${k}`]);
    expect(members("initech", gb)).toEqual([`other-${k}`, `two-${k}`]);
    await expectResyncWritesNothing("portal");

    await portal.patchUser(u.id, [{ op: "replace", path: "active", value: false }]);
    await h.waitForIdle();
    expect(members("globex", ga)).toEqual([`other-${k}`]);
    expect(members("initech", gb)).toEqual([`other-${k}`]);
    await portal.patchUser(u.id, [{ op: "replace", path: "active", value: true }]);
    await h.waitForIdle();
    expect(members("globex", ga)).toEqual([`other-${k}`, `two-${k}`]);
    expect(members("initech", gb)).toEqual([`other-${k}`, `two-${k}`]);

    expect((await portal.deleteUser(u.id)).status).toBe(204);
    await h.waitForIdle();
    expect(members("globex", ga)).toEqual([`other-${k}`]);
    expect(members("initech", gb)).toEqual([`other-${k}`]);
    await expectResyncWritesNothing("portal");
    await expectClean();
  });

  it("a group renamed inside its tenant keeps its embed group; renamed into another tenant it moves with its members", async () => {
    const portal = h.scim("portal");
    const u = await portal.createUser(uniq("mv"));
    const g = await portal.createGroup(`Umbrella/Ops ${n}`, [u.id]);
    await h.waitForIdle();
    const id = tenantGroups("umbrella").find((x) => x.name === `Umbrella/Ops ${n}`)?.id;
    expect(id).toBeDefined();

    await portal.patchGroup(g.id, [
      { op: "replace", path: "displayName", value: `Umbrella/Operations ${n}` },
    ]);
    await h.waitForIdle();
    const renamed = tenantGroups("umbrella").filter((x) => x.name.endsWith(` ${n}`));
    expect(renamed.map((x) => [x.id, x.name, x.members])).toEqual([
      [id, `Umbrella/Operations ${n}`, [u.userName]],
    ]);

    await portal.patchGroup(g.id, [{ op: "replace", path: "displayName", value: `Hooli/Operations ${n}` }]);
    await h.waitForIdle();
    expect(tenantGroups("umbrella").filter((x) => x.name.endsWith(` ${n}`))).toEqual([]);
    expect(members("hooli", `Hooli/Operations ${n}`)).toEqual([u.userName]);
    await expectResyncWritesNothing("portal");
    await expectClean();
  });

  it("a group moved by rename out of a tenant deleted behind the bridge's back lands in the new tenant with its members", async () => {
    const portal = h.scim("portal");
    const k = ++n;
    const [a, b] = [await portal.createUser(uniq("gone.a")), await portal.createUser(uniq("gone.b"))];
    const g = await portal.createGroup(`Vanish${k}/Team`, [a.id, b.id]);
    await h.waitForIdle();
    expect(members(`vanish${k}`, `Vanish${k}/Team`)).toEqual([a.userName, b.userName].sort());
    const res = await fetch(`${h.platformUrl}/api/v1/embed-tenants/vanish${k}`, {
      method: "DELETE",
      headers: { Authorization: `Bearer ${PLATFORM_TOKEN}` },
    });
    expect(res.status).toBe(204);
    await portal.patchGroup(g.id, [{ op: "replace", path: "displayName", value: `Landed${k}/Team` }]);
    await h.waitForIdle();
    expect(members(`landed${k}`, `Landed${k}/Team`)).toEqual([a.userName, b.userName].sort());
    expect(tenants().find((t) => t.name === `vanish${k}`)).toBeUndefined();
    await expectResyncWritesNothing("portal");
    await expectClean();
  });

  it("a group moved to another tenant and back before it synced: one embed group, in the first tenant, with its members", async () => {
    const portal = h.scim("portal");
    const k = ++n;
    const a = await portal.createUser(uniq("back"));
    const g = await portal.createGroup(`Home${k}/Crew`, [a.id]);
    await h.waitForIdle();
    const id = tenantGroups(`home${k}`)[0]?.id;
    await portal.patchGroup(g.id, [{ op: "replace", path: "displayName", value: `Away${k}/Crew` }]);
    await portal.patchGroup(g.id, [{ op: "replace", path: "displayName", value: `Home${k}/Crew` }]);
    await h.waitForIdle();
    expect(tenantGroups(`home${k}`).map((x) => [x.name, x.members])).toEqual([
      [`Home${k}/Crew`, [a.userName]],
    ]);
    expect(tenantGroups(`away${k}`)).toEqual([]);
    expect(id).toBeDefined();
    await expectClean();
  });

  it("a PATCH that changes nothing makes no write to the platform", async () => {
    const portal = h.scim("portal");
    const k = ++n;
    const a = await portal.createUser(uniq("noop"), { externalId: `noop-${k}` });
    const g = await portal.createGroup(`Noop${k}/G`, [a.id]);
    await h.waitForIdle();
    const before = writes();
    await portal.patchGroup(g.id, [
      { op: "replace", path: "displayName", value: `Noop${k}/G` },
      { op: "add", path: "members", value: [{ value: a.id }] },
    ]);
    await portal.patchUser(a.id, [{ op: "replace", path: "active", value: true }]);
    await h.waitForIdle();
    expect(writes()).toBe(before);
  });

  it("tenant names at the contract's limit: 63 characters derived is a tenant, 64 a visible dead letter", async () => {
    const portal = h.scim("portal");
    const u = await portal.createUser(uniq("t63"));
    const t63 = `t${"x".repeat(61)}${n % 10}`;
    expect(t63).toHaveLength(63);
    await portal.createGroup(`${t63.toUpperCase()}/G`, [u.id]);
    const bad = await portal.createGroup(`${t63}y/G`, [u.id]);
    await h.waitForIdle();
    expect(members(t63, `${t63.toUpperCase()}/G`)).toEqual([u.userName]);
    expect((await h.admin().get(`/sources/portal/groups/${bad.id}`)).body).toMatchObject({
      state: "dead",
      lastError: { code: "no_embed_tenant" },
    });
    expect(h.emulator.violations()).toEqual([]);
    expect((await portal.deleteGroup(bad.id)).status).toBe(204);
    await h.waitForIdle();
  });
});

describe("a fixed tenant", () => {
  it("the tenant missing on the platform comes into being with the first group; a member removed leaves only that group", async () => {
    expect(tenants().find((t) => t.name === "acme")).toBeUndefined();
    const acme = h.scim("acme");
    const [a, b] = [await acme.createUser(uniq("rm.a")), await acme.createUser(uniq("rm.b"))];
    const g1 = await acme.createGroup(`Rm one ${n}`, [a.id, b.id]);
    await acme.createGroup(`Rm two ${n}`, [a.id]);
    await h.waitForIdle();
    expect(members("acme", `Rm one ${n}`)).toEqual([a.userName, b.userName].sort());
    await acme.patchGroup(g1.id, [{ op: "remove", path: `members[value eq "${a.id}"]` }]);
    await h.waitForIdle();
    expect(members("acme", `Rm one ${n}`)).toEqual([b.userName]);
    expect(members("acme", `Rm two ${n}`)).toEqual([a.userName]);
    await expectResyncWritesNothing("acme");
    await expectClean();
  });

  it("an embed group renamed onto the name another group of the source is renaming away from converges", async () => {
    const acme = h.scim("acme");
    const k = ++n;
    const [a, b] = [await acme.createUser(uniq("chain.a")), await acme.createUser(uniq("chain.b"))];
    const x = await acme.createGroup(`Chain X ${k}`, [a.id]);
    const y = await acme.createGroup(`Chain Y ${k}`, [b.id]);
    await h.waitForIdle();
    h.emulator.addFault({ type: "slow", delayMs: 800, count: 1, match: { operation: "updateEmbedGroup" } });
    await acme.patchGroup(x.id, [{ op: "replace", path: "displayName", value: `Chain Z ${k}` }]);
    // X's rename takes 800 ms: Y's rename onto X's old name meets a 409 first.
    await new Promise((r) => setTimeout(r, 200));
    await acme.patchGroup(y.id, [{ op: "replace", path: "displayName", value: `Chain X ${k}` }]);
    await h.waitForIdle();
    expect(members("acme", `Chain Z ${k}`)).toEqual([a.userName]);
    expect(members("acme", `Chain X ${k}`)).toEqual([b.userName]);
    expect(tenantGroups("acme").filter((g) => g.name === `Chain Y ${k}`)).toEqual([]);
    await expectClean();
  });

  it("an embed group renamed onto the name of a group being deleted (the delete slow) converges", async () => {
    const acme = h.scim("acme");
    const k = ++n;
    const [a, b] = [await acme.createUser(uniq("del.a")), await acme.createUser(uniq("del.b"))];
    const gone = await acme.createGroup(`Going ${k}`, [a.id]);
    const mover = await acme.createGroup(`Mover ${k}`, [b.id]);
    await h.waitForIdle();
    h.emulator.addFault({ type: "slow", delayMs: 800, count: 1, match: { operation: "deleteEmbedGroup" } });
    expect((await acme.deleteGroup(gone.id)).status).toBe(204);
    await new Promise((r) => setTimeout(r, 200));
    await acme.patchGroup(mover.id, [{ op: "replace", path: "displayName", value: `Going ${k}` }]);
    await h.waitForIdle();
    expect(members("acme", `Going ${k}`)).toEqual([b.userName]);
    expect(tenantGroups("acme").filter((g) => g.name === `Mover ${k}`)).toEqual([]);
    await expectClean();
  });

  it("an embed group created under the name another group of the source is renaming away from converges", async () => {
    const acme = h.scim("acme");
    const k = ++n;
    const [a, b] = [await acme.createUser(uniq("hand.a")), await acme.createUser(uniq("hand.b"))];
    const x = await acme.createGroup(`Handed ${k}`, [a.id]);
    await h.waitForIdle();
    const id = tenantGroups("acme").find((g) => g.name === `Handed ${k}`)?.id;
    h.emulator.addFault({ type: "slow", delayMs: 800, count: 1, match: { operation: "updateEmbedGroup" } });
    await acme.patchGroup(x.id, [{ op: "replace", path: "displayName", value: `Moved ${k}` }]);
    await new Promise((r) => setTimeout(r, 200));
    await acme.createGroup(`Handed ${k}`, [b.id]);
    await h.waitForIdle();
    expect(tenantGroups("acme").find((g) => g.name === `Moved ${k}`)?.id).toBe(id);
    expect(members("acme", `Moved ${k}`)).toEqual([a.userName]);
    expect(members("acme", `Handed ${k}`)).toEqual([b.userName]);
    await expectClean();
  });

  it("a rename onto another source's embed group name in the shared tenant is a visible conflict, not a wait; renamed back it lands", async () => {
    const acme = h.scim("acme");
    const k = ++n;
    const a = await acme.createUser(uniq("theirs.a"));
    await acme.createGroup(`Ours ${k}`, [a.id]);
    const c = await h.scim("hr").createUser(uniq("theirs.c"));
    const theirs = await h.scim("hr").createGroup(`Theirs ${k}`, [c.id]);
    await h.waitForIdle();
    await h.scim("hr").patchGroup(theirs.id, [{ op: "replace", path: "displayName", value: `Ours ${k}` }]);
    await h.waitForIdle();
    expect((await h.admin().get(`/sources/hr/groups/${theirs.id}`)).body).toMatchObject({
      state: "dead",
      lastError: { code: "platform_conflict" },
    });
    // Nothing of acme's was written by hr.
    expect(members("acme", `Ours ${k}`)).toEqual([a.userName]);
    expect(members("acme", `Theirs ${k}`)).toEqual([c.userName]);
    await h
      .scim("hr")
      .patchGroup(theirs.id, [{ op: "replace", path: "displayName", value: `Theirs ${k} again` }]);
    await h.waitForIdle();
    expect(members("acme", `Theirs ${k} again`)).toEqual([c.userName]);
    expect(members("acme", `Ours ${k}`)).toEqual([a.userName]);
    await expectClean();
  });

  it("two sources in one tenant: a user deleted at one leaves that source's groups only, the other's keep the person", async () => {
    const x = `shared-${++n}`;
    const a = await h.scim("acme").createUser(uniq("iso"), { externalId: x });
    const b = await h.scim("hr").createUser(uniq("iso"), { externalId: x });
    await h.scim("acme").createGroup(`Iso acme ${n}`, [a.id]);
    await h.scim("hr").createGroup(`Iso hr ${n}`, [b.id]);
    await h.waitForIdle();
    expect(members("acme", `Iso acme ${n}`)).toEqual([x]);
    expect(members("acme", `Iso hr ${n}`)).toEqual([x]);
    const before = h.emulator.requests().length;
    expect((await h.scim("acme").deleteUser(a.id)).status).toBe(204);
    await h.waitForIdle();
    expect(members("acme", `Iso acme ${n}`)).toEqual([]);
    expect(members("acme", `Iso hr ${n}`)).toEqual([x]);
    const hrGroup = tenantGroups("acme").find((g) => g.name === `Iso hr ${n}`)?.id as string;
    const touched = h.emulator
      .requests()
      .slice(before)
      .filter((r) => r.method !== "GET" && r.path.includes(hrGroup));
    expect(touched).toEqual([]);
    await expectResyncWritesNothing("hr");
    await expectClean();
  });

  it("group names at the contract's limit: 200 characters (non-ASCII, prefix included) land; 201 is refused at intake", async () => {
    const pre = h.scim("pre");
    const u = await pre.createUser(uniq("len"));
    // "IdP " (4) + 196 characters, 98 of them outside the BMP (two UTF-16 units each).
    const name196 = "😀é".repeat(98);
    const ok = await pre.createGroup(name196, [u.id]);
    await expect(pre.createGroup(`${name196}x`, [u.id])).rejects.toThrow(/create group 400/);
    await h.waitForIdle();
    expect(members("pre", `IdP ${name196}`)).toEqual([u.userName]);
    expect(h.emulator.violations()).toEqual([]);
    await h
      .scim("pre")
      .patchGroup(ok.id, [{ op: "replace", path: "displayName", value: `${name196.slice(0, -1)}ü` }]);
    await h.waitForIdle();
    expect(members("pre", `IdP ${name196.slice(0, -1)}ü`)).toEqual([u.userName]);
    await expectResyncWritesNothing("pre");
    await expectClean();
  });
});
