/**
 * Faults-k: the mapping rules under platform faults, end to end (the whole bridge, the strict
 * emulator over HTTP). Lost answers are `applyThenFail`: the write lands, its answer never comes,
 * and the same call answers 503 until the test clears the faults, so the identity provider's next
 * change meets the create (or add) still in doubt.
 * - an embed user's externalId changed, then taken away: its old identity leaves every group;
 * - a userName renamed onto a name the platform already holds: a visible conflict that holds back
 *   the userName alone (the rest of the change lands); renamed again, the letter goes;
 * - users deleted on the platform behind the bridge, then changed at the source: created again,
 *   back in their groups; a member whose user is a dead letter does not block the others;
 * - a userName given to another user (created, or renamed onto it) while the deprovisioning of its
 *   old user failed for good: a visible conflict, not a wait for ever that keeps the bridge busy;
 * - creates in doubt (groups, attribute definitions, users, embed groups), then renamed, changed or
 *   deleted at the source: one object each, as the directory says.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  PLATFORM_TOKEN,
  type TestBridge,
  applyThenFail,
  startTestBridge,
} from "../helpers/bridge-harness.js";
import { waitFor } from "../helpers/redis-test-prefix.js";

let h: TestBridge;

beforeAll(async () => {
  h = await startTestBridge("faults-k-mapping", {
    sources: {
      okta: { tokens: ["okta-token"], attributes: { dept_k: { from: "title", type: "string" } } },
      gone: { tokens: ["gone-token"], onDelete: "delete" },
      acme: { tokens: ["acme-token"], target: { embedTenant: "acme-k" } },
    },
  });
});
afterAll(async () => {
  await h?.close();
});

type Tenant = { name: string; groups: Array<{ id: string; name: string; members: string[] }> };
const tenants = () => (h.emulator.state() as unknown as { embedTenants: Tenant[] }).embedTenants;
const embedMembers = (tenant: string, name: string) =>
  [
    ...(tenants()
      .find((t) => t.name === tenant)
      ?.groups.find((g) => g.name === name)?.members ?? []),
  ].sort();
const platformGroups = () =>
  (h.emulator.state() as unknown as { groups: Array<{ id: string; displayName: string; members: string[] }> })
    .groups;
const status = async () => (await h.admin().get("/status")).body as { idle: boolean; deadLetters: number };
const letters = async () =>
  (await h.admin().get("/dead-letters")).body.items as Array<{
    ref: { source: string; kind: string; id: string };
    code: string;
    reason: string;
  }>;

async function platformCall(method: string, path: string, body?: unknown): Promise<Response> {
  return fetch(`${h.platformUrl}${path}`, {
    method,
    headers: { Authorization: `Bearer ${PLATFORM_TOKEN}`, "Content-Type": "application/scim+json" },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
}

describe("faults-k: embed identity changes", () => {
  it("an embed user's externalId changed (a removal's answer lost): the old identity leaves every group, the new one joins", async () => {
    const acme = h.scim("acme");
    const u = await acme.createUser("ext.k@example.com", { externalId: "ext-old-k" });
    const o = await acme.createUser("ext.other.k@example.com", { externalId: "ext-other-k" });
    await acme.createGroup("K One", [u.id, o.id]);
    await acme.createGroup("K Two", [u.id, o.id]);
    await h.waitForIdle();
    expect(embedMembers("acme-k", "K One")).toEqual(["ext-old-k", "ext-other-k"]);
    const before = h.emulator.count("removeEmbedGroupMembers");
    applyThenFail(h.emulator, "removeEmbedGroupMembers");
    expect(
      (await acme.patchUser(u.id, [{ op: "replace", path: "externalId", value: "ext-new-k" }])).status,
    ).toBe(200);
    await waitFor(async () => h.emulator.count("removeEmbedGroupMembers") >= before + 2, {
      what: "a removal",
    });
    h.emulator.clearFaults();
    await h.waitForIdle();
    expect(embedMembers("acme-k", "K One")).toEqual(["ext-new-k", "ext-other-k"]);
    expect(embedMembers("acme-k", "K Two")).toEqual(["ext-new-k", "ext-other-k"]);
    // externalId taken away: the user is known by its userName again.
    expect((await acme.patchUser(u.id, [{ op: "remove", path: "externalId" }])).status).toBe(200);
    await h.waitForIdle();
    expect(embedMembers("acme-k", "K One")).toEqual(["ext-other-k", "ext.k@example.com"]);
    expect(embedMembers("acme-k", "K Two")).toEqual(["ext-other-k", "ext.k@example.com"]);
    expect(await status()).toMatchObject({ idle: true, deadLetters: 0 });
  }, 60_000);
});

describe("faults-k: workspace identity", () => {
  it("a userName changed to one an unowned platform user holds: a visible conflict, the holder untouched; renamed again, it lands", async () => {
    h.emulator.seed({ users: [{ userName: "holder.k@example.com", displayName: "Holder" }] });
    const okta = h.scim("okta");
    const u = await okta.createUser("mover.k@example.com", { displayName: "Mover" });
    await h.waitForIdle();
    const pid = h.platformUsers().get("mover.k@example.com")?.id;
    expect(
      (
        await okta.patchUser(u.id, [
          { op: "replace", path: "userName", value: "Holder.K@example.com" },
          { op: "replace", path: "displayName", value: "Mover 2" },
        ])
      ).status,
    ).toBe(200);
    await waitFor(async () => (await status()).deadLetters === 1, { what: "the conflict's dead letter" });
    await h.waitForIdle();
    const holder = h.platformUsers().get("holder.k@example.com");
    expect(holder?.displayName).toBe("Holder");
    expect(holder?.id).not.toBe(pid);
    // The conflict holds back the userName alone: the rest of the change reaches the platform.
    expect(h.platformUsers().get("mover.k@example.com")?.displayName).toBe("Mover 2");
    const letter = (await letters()).find((l) => l.ref.id === u.id);
    expect(letter?.code).toMatch(/conflict/);
    const entity = (await h.admin().get(`/sources/okta/users/${u.id}`)).body as { state: string };
    expect(entity.state).toBe("dead");
    expect(
      (await okta.patchUser(u.id, [{ op: "replace", path: "userName", value: "moved.k@example.com" }]))
        .status,
    ).toBe(200);
    await h.waitForIdle();
    const moved = h.platformUsers().get("moved.k@example.com");
    expect(moved?.id).toBe(pid);
    expect(moved?.displayName).toBe("Mover 2");
    expect((await letters()).filter((l) => l.ref.id === u.id)).toEqual([]);
  }, 60_000);

  it("a user deleted on the platform behind the bridge, then deactivated at the source: there again, inactive", async () => {
    const okta = h.scim("okta");
    const u = await okta.createUser("behind.k@example.com");
    const g = await okta.createGroup("Behind K", [u.id]);
    await h.waitForIdle();
    const pid = h.platformUsers().get("behind.k@example.com")?.id as string;
    expect((await platformCall("DELETE", `/api/scim/v2/Users/${pid}`)).status).toBe(204);
    expect((await okta.patchUser(u.id, [{ op: "replace", path: "active", value: false }])).status).toBe(200);
    await h.waitForIdle();
    const again = h.platformUsers().get("behind.k@example.com");
    expect(again?.active).toBe(false);
    expect(again?.id).not.toBe(pid);
    // A deactivated user stays in its groups.
    expect(platformGroups().find((x) => x.displayName === "Behind K")?.members).toEqual([again?.id]);
    expect(g.id).toBeDefined();
    expect((await status()).deadLetters).toBe(0);
  }, 60_000);

  it("a user deleted on the platform behind the bridge, then renamed at the source: there again with the new name, in its group", async () => {
    const okta = h.scim("okta");
    const u = await okta.createUser("behind2.k@example.com");
    await okta.createGroup("Behind2 K", [u.id]);
    await h.waitForIdle();
    const pid = h.platformUsers().get("behind2.k@example.com")?.id as string;
    expect((await platformCall("DELETE", `/api/scim/v2/Users/${pid}`)).status).toBe(204);
    expect(
      (
        await okta.patchUser(u.id, [
          { op: "replace", path: "userName", value: "behind2.renamed.k@example.com" },
        ])
      ).status,
    ).toBe(200);
    await h.waitForIdle();
    const again = h.platformUsers().get("behind2.renamed.k@example.com");
    expect(again?.active).toBe(true);
    expect(platformGroups().find((x) => x.displayName === "Behind2 K")?.members).toEqual([again?.id]);
    expect((await status()).deadLetters).toBe(0);
  }, 60_000);
  it("a member whose user is a dead letter (its userName held by another source) does not block the others; renamed, it joins", async () => {
    const entra = h.scim("gone");
    await entra.createUser("held.k@example.com");
    await h.waitForIdle();
    const okta = h.scim("okta");
    const ok = await okta.createUser("free.member.k@example.com");
    const held = await okta.createUser("Held.K@example.com");
    await okta.createGroup("Blocked K", [held.id, ok.id]);
    await waitFor(async () => (await letters()).some((l) => l.ref.id === held.id), { what: "held's letter" });
    await h.waitForIdle();
    const group = () => platformGroups().find((x) => x.displayName === "Blocked K");
    expect(group()?.members).toEqual([h.platformUsers().get("free.member.k@example.com")?.id]);
    expect((await letters()).find((l) => l.ref.id === held.id)?.code).toMatch(/conflict/);
    await okta.patchUser(held.id, [{ op: "replace", path: "userName", value: "unheld.k@example.com" }]);
    await h.waitForIdle();
    const ids = ["free.member.k@example.com", "unheld.k@example.com"].map(
      (n) => h.platformUsers().get(n)?.id,
    );
    expect([...(group()?.members ?? [])].sort()).toEqual(ids.sort());
    expect((await letters()).filter((l) => l.ref.id === held.id)).toEqual([]);
  }, 60_000);
});

describe("faults-k: a userName given again while its old user's deprovisioning failed for good", () => {
  it("the new user is a visible conflict, not a wait for ever; once the old one is deprovisioned, a retry adopts", async () => {
    const okta = h.scim("okta");
    const old = await okta.createUser("reused.k@example.com");
    await h.waitForIdle();
    const pid = h.platformUsers().get("reused.k@example.com")?.id as string;
    h.emulator.drift({ action: "failBulkFor", userId: pid, code: "FORBIDDEN" });
    expect((await okta.deleteUser(old.id)).status).toBe(204);
    await waitFor(async () => (await letters()).some((l) => l.ref.id === old.id), {
      what: "the old user's letter",
    });
    const again = await okta.createUser("reused.k@example.com", { displayName: "Again" });
    // The bridge settles (idle): the new user does not wait for an admin's act as if it were coming.
    await waitFor(async () => (await letters()).some((l) => l.ref.id === again.id), {
      timeoutMs: 15_000,
      what: "the new user's letter",
    });
    await h.waitForIdle();
    const entity = (await h.admin().get(`/sources/okta/users/${again.id}`)).body as {
      state: string;
      lastError?: { code: string };
    };
    expect(entity).toMatchObject({ state: "dead", lastError: { code: "ownership_conflict" } });
    // The platform lets the old user go: its retry deprovisions it, then the new one's adopts it.
    h.emulator.drift({ action: "failBulkFor", userId: pid, code: "" });
    expect((await h.admin().post(`/dead-letters/okta/user/${old.id}/retry`)).status).toBeLessThan(300);
    await h.waitForIdle();
    expect((await h.admin().post(`/dead-letters/okta/user/${again.id}/retry`)).status).toBeLessThan(300);
    await h.waitForIdle();
    expect(h.platformUsers().get("reused.k@example.com")).toMatchObject({
      id: pid,
      active: true,
      displayName: "Again",
    });
    expect((await letters()).filter((l) => [old.id, again.id].includes(l.ref.id))).toEqual([]);
  }, 60_000);
});

describe("faults-k: a userName given again while its old user's deprovisioning failed for good (rename)", () => {
  it("a user renamed onto it is a visible conflict, not a wait for ever; its other changes land", async () => {
    const gone = h.scim("gone");
    const old = await gone.createUser("renamed.onto.k@example.com");
    const mover = await gone.createUser("renamer.k@example.com");
    await h.waitForIdle();
    const pid = h.platformUsers().get("renamed.onto.k@example.com")?.id as string;
    h.emulator.drift({ action: "failBulkFor", userId: pid, code: "FORBIDDEN" });
    expect((await gone.deleteUser(old.id)).status).toBe(204);
    await waitFor(async () => (await letters()).some((l) => l.ref.id === old.id), {
      what: "the old user's letter",
    });
    await gone.patchUser(mover.id, [
      { op: "replace", path: "userName", value: "renamed.onto.k@example.com" },
      { op: "replace", path: "displayName", value: "Renamer" },
    ]);
    await waitFor(async () => (await letters()).some((l) => l.ref.id === mover.id), {
      timeoutMs: 15_000,
      what: "the renamed user's letter",
    });
    await h.waitForIdle();
    expect(h.platformUsers().get("renamer.k@example.com")?.displayName).toBe("Renamer");
    h.emulator.drift({ action: "failBulkFor", userId: pid, code: "" });
    expect((await h.admin().post(`/dead-letters/gone/user/${old.id}/retry`)).status).toBeLessThan(300);
    await h.waitForIdle();
    expect((await h.admin().post(`/dead-letters/gone/user/${mover.id}/retry`)).status).toBeLessThan(300);
    await h.waitForIdle();
    expect(h.platformUsers().get("renamed.onto.k@example.com")?.displayName).toBe("Renamer");
    expect(h.platformUsers().has("renamer.k@example.com")).toBe(false);
    expect((await letters()).filter((l) => [old.id, mover.id].includes(l.ref.id))).toEqual([]);
  }, 60_000);
});

describe("faults-k: lost create answers", () => {
  it("a group create applied with its answer lost, then a member removed at the source: one group, exactly the members", async () => {
    const okta = h.scim("okta");
    const a = await okta.createUser("lg.a.k@example.com");
    const b = await okta.createUser("lg.b.k@example.com");
    const c = await okta.createUser("lg.c.k@example.com");
    await h.waitForIdle();
    const before = h.emulator.count("createGroup");
    applyThenFail(h.emulator, "createGroup");
    const g = await okta.createGroup("Lost K", [a.id, b.id, c.id]);
    await waitFor(async () => h.emulator.count("createGroup") >= before + 2, { what: "a create repeated" });
    expect(
      (await okta.patchGroup(g.id, [{ op: "remove", path: `members[value eq "${b.id}"]` }])).status,
    ).toBeLessThan(300);
    h.emulator.clearFaults();
    await h.waitForIdle();
    const groups = platformGroups().filter((x) => x.displayName === "Lost K");
    expect(groups).toHaveLength(1);
    const ids = ["lg.a.k@example.com", "lg.c.k@example.com"].map((n) => h.platformUsers().get(n)?.id);
    expect([...(groups[0]?.members ?? [])].sort()).toEqual(ids.sort());
    expect((await status()).deadLetters).toBe(0);
  }, 60_000);

  it("a group create applied with its answer lost, then the group renamed at the source: one group, the new name", async () => {
    const okta = h.scim("okta");
    const a = await okta.createUser("lr.a.k@example.com");
    await h.waitForIdle();
    const before = h.emulator.count("createGroup");
    applyThenFail(h.emulator, "createGroup");
    const g = await okta.createGroup("Lost Rename K", [a.id]);
    await waitFor(async () => h.emulator.count("createGroup") >= before + 2, { what: "a create repeated" });
    expect(
      (await okta.patchGroup(g.id, [{ op: "replace", path: "displayName", value: "Renamed K" }])).status,
    ).toBeLessThan(300);
    h.emulator.clearFaults();
    await h.waitForIdle();
    expect(platformGroups().filter((x) => x.displayName === "Lost Rename K")).toHaveLength(0);
    const groups = platformGroups().filter((x) => x.displayName === "Renamed K");
    expect(groups).toHaveLength(1);
    expect(groups[0]?.members).toEqual([h.platformUsers().get("lr.a.k@example.com")?.id]);
    expect((await status()).deadLetters).toBe(0);
  }, 60_000);

  it("an attribute definition create applied with its answer lost: adopted, the value lands", async () => {
    const okta = h.scim("okta");
    const before = h.emulator.count("createUserAttribute");
    applyThenFail(h.emulator, "createUserAttribute");
    await okta.createUser("attr.k@example.com", { title: "Engineer" });
    await waitFor(async () => h.emulator.count("createUserAttribute") >= before + 2, {
      what: "a create repeated",
    });
    h.emulator.clearFaults();
    await h.waitForIdle();
    const state = h.emulator.state() as unknown as {
      attributes: Array<{ id: number; name: string }>;
      attributeValues: Array<{ userId: string; name: string; value: unknown }>;
    };
    expect(state.attributes.filter((a) => a.name.toLowerCase() === "dept_k")).toHaveLength(1);
    const pid = h.platformUsers().get("attr.k@example.com")?.id;
    expect(state.attributeValues.filter((v) => v.userId === pid)).toMatchObject([
      { name: "dept_k", value: "Engineer" },
    ]);
    expect((await status()).deadLetters).toBe(0);
  }, 60_000);

  for (const source of ["okta", "gone"] as const) {
    it(`a user create applied with its answer lost, the user deleted at the source while retried (${source}): deprovisioned`, async () => {
      const scim = h.scim(source);
      const name = `lost.del.${source}.k@example.com`;
      const before = h.emulator.count("createUser");
      applyThenFail(h.emulator, "createUser");
      const u = await scim.createUser(name);
      await waitFor(async () => h.emulator.count("createUser") >= before + 2, { what: "a create repeated" });
      expect((await scim.deleteUser(u.id)).status).toBe(204);
      h.emulator.clearFaults();
      await h.waitForIdle();
      const left = (
        h.emulator.state() as unknown as { users: Array<{ userName: string; active: boolean }> }
      ).users.filter((x) => x.userName === name);
      if (source === "gone") expect(left).toEqual([]);
      else expect(left.map((x) => x.active)).toEqual([false]);
      expect((await status()).deadLetters).toBe(0);
    }, 60_000);
  }
});

describe("faults-k: embed groups under lost answers", () => {
  it("an embed group create applied with its answer lost, then renamed at the source: one embed group, the new name, its members", async () => {
    const acme = h.scim("acme");
    const u = await acme.createUser("eg.k@example.com", { externalId: "eg-k" });
    await h.waitForIdle();
    const before = h.emulator.count("createEmbedGroup");
    applyThenFail(h.emulator, "createEmbedGroup");
    const g = await acme.createGroup("EG Lost K", [u.id]);
    await waitFor(async () => h.emulator.count("createEmbedGroup") >= before + 2, {
      what: "a create repeated",
    });
    expect(
      (await acme.patchGroup(g.id, [{ op: "replace", path: "displayName", value: "EG Renamed K" }])).status,
    ).toBeLessThan(300);
    h.emulator.clearFaults();
    await h.waitForIdle();
    const groups = tenants().find((t) => t.name === "acme-k")?.groups ?? [];
    expect(groups.filter((x) => x.name.startsWith("EG "))).toMatchObject([
      { name: "EG Renamed K", members: ["eg-k"] },
    ]);
    expect((await status()).deadLetters).toBe(0);
  }, 60_000);

  it("an embed group create applied with its answer lost, then deleted at the source: no embed group left", async () => {
    const acme = h.scim("acme");
    const before = h.emulator.count("createEmbedGroup");
    applyThenFail(h.emulator, "createEmbedGroup");
    const g = await acme.createGroup("EG Gone K", []);
    await waitFor(async () => h.emulator.count("createEmbedGroup") >= before + 2, {
      what: "a create repeated",
    });
    expect((await acme.deleteGroup(g.id)).status).toBe(204);
    h.emulator.clearFaults();
    await h.waitForIdle();
    const groups = tenants().find((t) => t.name === "acme-k")?.groups ?? [];
    expect(groups.filter((x) => x.name === "EG Gone K")).toEqual([]);
    expect((await status()).deadLetters).toBe(0);
  }, 60_000);

  it("a member add applied with its answer lost, then that member removed at the source: it leaves", async () => {
    const acme = h.scim("acme");
    const a = await acme.createUser("ema.k@example.com", { externalId: "ema-k" });
    const b = await acme.createUser("emb.k@example.com", { externalId: "emb-k" });
    const g = await acme.createGroup("EM K", [a.id]);
    await h.waitForIdle();
    const before = h.emulator.count("addEmbedGroupMembers");
    applyThenFail(h.emulator, "addEmbedGroupMembers");
    await acme.patchGroup(g.id, [{ op: "add", path: "members", value: [{ value: b.id }] }]);
    await waitFor(async () => h.emulator.count("addEmbedGroupMembers") >= before + 2, {
      what: "an add repeated",
    });
    await acme.patchGroup(g.id, [{ op: "remove", path: `members[value eq "${b.id}"]` }]);
    h.emulator.clearFaults();
    await h.waitForIdle();
    expect(embedMembers("acme-k", "EM K")).toEqual(["ema-k"]);
    expect((await status()).deadLetters).toBe(0);
  }, 60_000);
});
