/**
 * Acceptance probes (round g), end to end: traffic sequences as identity providers send them
 * (Okta's SCIM 2.0 reference and spec tests, Microsoft Entra's "Develop and plan provisioning for
 * a SCIM endpoint" and "Known issues ... SCIM 2.0 protocol compliance", OneLogin, JumpCloud,
 * PingFederate, Keycloak), checked on the emulated platform once the queues drain: who is active,
 * who is in which group, under which name. Earlier rounds: idp-probes-a/d/e (intake only),
 * idp-lifecycle-e2e, idp-dialects-e2e, idp-under-faults-e2e.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PATCH_SCHEMA, type TestBridge, USER_SCHEMA, startTestBridge } from "../helpers/bridge-harness.js";

const ENT = "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User";

let h: TestBridge;

beforeAll(async () => {
  h = await startTestBridge("acceptance-idp-probes-g", {
    sources: {
      okta: { tokens: ["okta-token"] },
      entra: { tokens: ["entra-token"] },
      ping: { tokens: ["ping-token"], onDelete: "delete" },
      // where a visible conflict is the expected outcome (its dead letters are not counted below)
      jumpcloud: { tokens: ["jumpcloud-token"] },
      onelogin: {
        tokens: ["onelogin-token"],
        attributes: {
          phone: { from: "phoneNumbers[primary eq true].value", type: "string" },
          mobile: { from: 'phoneNumbers[type eq "mobile"].value', type: "string" },
          mail: { from: "emails[primary eq true].value", type: "string" },
          boss: { from: `${ENT}:manager`, type: "string" },
        },
      },
    },
  });
});
afterAll(async () => {
  await h?.close();
});

type PUser = {
  id: string;
  userName: string;
  externalId?: string;
  active: boolean;
  displayName?: string;
  name?: { givenName?: string; familyName?: string };
  emails?: Array<{ value: string; type?: string; primary?: boolean }>;
} & Record<string, unknown>;
type PGroup = { id: string; displayName: string; members: string[] };
type Snapshot = { users: PUser[]; groups: PGroup[] };

const snap = () => h.emulator.state() as unknown as Snapshot;
const usersNamed = (userName: string) =>
  snap().users.filter((u) => u.userName.toLowerCase() === userName.toLowerCase());
const oneUser = (userName: string) => {
  const found = usersNamed(userName);
  expect(found, `platform users named ${userName}`).toHaveLength(1);
  return found[0] as PUser;
};
const groupNamed = (displayName: string) => snap().groups.filter((g) => g.displayName === displayName);
const oneGroup = (displayName: string) => {
  const found = groupNamed(displayName);
  expect(found, `platform groups named ${displayName}`).toHaveLength(1);
  return found[0] as PGroup;
};
const q = (filter: string) => encodeURIComponent(filter);
let n = 0;
const uniq = (stem: string) => `${stem}.g${++n}@example.com`;

async function expectNoDeadLetters() {
  const status = await h.admin().get("/status");
  const sources = status.body.sources as Record<string, { deadLetters: number }>;
  for (const [source, counts] of Object.entries(sources)) {
    if (source !== "jumpcloud")
      expect(counts.deadLetters, `${source}: ${JSON.stringify(status.body)}`).toBe(0);
  }
  expect(h.emulator.violations()).toEqual([]);
}

describe("renames and look-ups by name", () => {
  it("Okta: a case-only userName change, then a rename; look-ups by the old and new names answer as the platform holds them", async () => {
    const okta = h.scim("okta");
    const first = uniq("Mixed.Case");
    const u = await okta.createUser(first, { externalId: "okta-00u1" });
    await h.waitForIdle();
    const platformId = oneUser(first).id;

    const lower = first.toLowerCase();
    expect((await okta.patchUser(u.id, [{ op: "replace", path: "userName", value: lower }])).status).toBe(
      200,
    );
    // The old spelling still finds the user (userName is caseExact false, RFC 7643 §4.1.1).
    const byOld = await okta.get(`/Users?filter=${q(`userName eq "${first}"`)}`);
    expect(byOld.body.totalResults).toBe(1);
    await h.waitForIdle();
    expect(oneUser(lower)).toMatchObject({ id: platformId, userName: lower });

    const renamed = uniq("renamed");
    expect((await okta.patchUser(u.id, [{ op: "replace", path: "userName", value: renamed }])).status).toBe(
      200,
    );
    expect((await okta.get(`/Users?filter=${q(`userName eq "${lower}"`)}`)).body.totalResults).toBe(0);
    expect(
      (await okta.get(`/Users?filter=${q(`userName eq "${renamed.toUpperCase()}"`)}`)).body.totalResults,
    ).toBe(1);
    await h.waitForIdle();
    expect(usersNamed(first)).toEqual([]);
    expect(oneUser(renamed)).toMatchObject({ id: platformId, externalId: "okta-00u1", active: true });
    await expectNoDeadLetters();
  });

  it("externalId added later, changed, then cleared by a PUT: the platform user follows each time", async () => {
    const entra = h.scim("entra");
    const name = uniq("ext.later");
    const u = await entra.createUser(name);
    await h.waitForIdle();
    expect(oneUser(name).externalId).toBeUndefined();
    await entra.patchUser(u.id, [{ op: "Add", path: "externalId", value: "aad-obj-1" }]);
    await h.waitForIdle();
    expect(oneUser(name).externalId).toBe("aad-obj-1");
    await entra.patchUser(u.id, [{ op: "Replace", path: "externalId", value: "aad-obj-2" }]);
    await h.waitForIdle();
    expect(oneUser(name).externalId).toBe("aad-obj-2");
    const put = await entra.put(`/Users/${u.id}`, { schemas: [USER_SCHEMA], userName: name, active: true });
    expect(put.status).toBe(200);
    await h.waitForIdle();
    expect(oneUser(name).externalId).toBeUndefined();
    expect((await entra.get(`/Users?filter=${q('externalId eq "aad-obj-2"')}`)).body.totalResults).toBe(0);
    await expectNoDeadLetters();
  });

  it("a userName with non-ASCII letters: found case-insensitively, renamed, one platform user with the name as sent", async () => {
    const okta = h.scim("okta");
    const name = `zoë.ñúñez.${++n}@exámple.com`;
    const u = await okta.createUser(name, {
      name: { givenName: "Zoë", familyName: "Müller-Łukasiewicz" },
      displayName: "山田 太郎 Zoë",
    });
    const found = await okta.get(`/Users?filter=${q(`userName eq "${name.toUpperCase()}"`)}`);
    expect(found.body.totalResults).toBe(1);
    await h.waitForIdle();
    expect(oneUser(name)).toMatchObject({
      userName: name,
      name: { givenName: "Zoë", familyName: "Müller-Łukasiewicz" },
      displayName: "山田 太郎 Zoë",
    });
    const upper = name.toUpperCase();
    await okta.patchUser(u.id, [{ op: "replace", path: "userName", value: upper }]);
    await h.waitForIdle();
    expect(oneUser(name).userName).toBe(upper);
    await expectNoDeadLetters();
  });
});

describe("retries of an answer the IdP never got", () => {
  it("Okta/Entra: POST again → 409 uniqueness → GET by filter → PATCH: one platform user, patched", async () => {
    const okta = h.scim("okta");
    const name = uniq("retry.post");
    const body = {
      schemas: [USER_SCHEMA],
      userName: name,
      active: true,
      name: { givenName: "Re", familyName: "Try" },
    };
    const first = await okta.createUser(name, body);
    const again = await h.http
      .post("/scim/v2/okta/Users")
      .set({ Authorization: "Bearer okta-token", "Content-Type": "application/scim+json" })
      .send(body);
    expect(again.status).toBe(409);
    expect(again.body.scimType).toBe("uniqueness");
    const lookup = await okta.get(`/Users?filter=${q(`userName eq "${name}"`)}`);
    expect(lookup.body.Resources.map((r: { id: string }) => r.id)).toEqual([first.id]);
    await okta.patchUser(first.id, [{ op: "replace", value: { displayName: "Re Try", active: true } }]);
    await h.waitForIdle();
    expect(oneUser(name)).toMatchObject({ displayName: "Re Try", active: true });
    await expectNoDeadLetters();
  });
});

describe("Entra ID lifecycle: soft delete, re-enable, hard delete", () => {
  it('active "False" → inactive; "True" → active; DELETE → the source\'s onDelete (deactivate)', async () => {
    const entra = h.scim("entra");
    const name = uniq("soft.delete");
    const u = await entra.createUser(name, { externalId: "aad-soft" });
    const member = await entra.createGroup(`Soft ${n}`, [u.id]);
    await h.waitForIdle();
    await entra.patchUser(u.id, [{ op: "Replace", path: "active", value: "False" }]);
    await h.waitForIdle();
    expect(oneUser(name).active).toBe(false);
    // a deactivated user stays a member of its workspace groups
    expect(oneGroup(`Soft ${n}`).members).toEqual([oneUser(name).id]);
    await entra.patchUser(u.id, [{ op: "Replace", path: "active", value: "True" }]);
    await h.waitForIdle();
    expect(oneUser(name).active).toBe(true);
    expect((await entra.deleteUser(u.id)).status).toBe(204);
    await h.waitForIdle();
    expect(oneUser(name).active).toBe(false);
    expect(oneGroup(`Soft ${n}`).members).toEqual([]);
    expect((await entra.get(`/Groups/${member.id}`)).body.members ?? []).toEqual([]);
    await expectNoDeadLetters();
  });

  it("the same with onDelete: delete, all three in quick succession: the platform user is gone", async () => {
    const ping = h.scim("ping");
    const name = uniq("quick.soft");
    const u = await ping.createUser(name);
    await h.waitForIdle();
    await ping.patchUser(u.id, [{ op: "Replace", path: "active", value: "False" }]);
    await ping.patchUser(u.id, [{ op: "Replace", path: "active", value: "True" }]);
    await ping.deleteUser(u.id);
    await h.waitForIdle();
    expect(usersNamed(name)).toEqual([]);
    await expectNoDeadLetters();
  });
});

describe("groups and deletions in quick succession", () => {
  it("a user removed from a group and deleted at once: out of the group, deprovisioned", async () => {
    const entra = h.scim("entra");
    const [a, b] = [await entra.createUser(uniq("rm.a")), await entra.createUser(uniq("rm.b"))];
    const g = await entra.createGroup(`Quick rm ${n}`, [a.id, b.id]);
    await h.waitForIdle();
    await entra.patchGroup(g.id, [{ op: "Remove", path: `members[value eq "${b.id}"]` }]);
    await entra.deleteUser(b.id);
    await h.waitForIdle();
    expect(oneGroup(`Quick rm ${n}`).members).toEqual([oneUser(a.userName).id]);
    expect(oneUser(b.userName).active).toBe(false);
    await expectNoDeadLetters();
  });

  it("members deleted before the group's first sync: the group lands with the others only", async () => {
    const ping = h.scim("ping");
    const users = [];
    for (let i = 0; i < 4; i++) users.push(await ping.createUser(uniq("early.del")));
    const g = await ping.createGroup(
      `Early del ${n}`,
      users.map((u) => u.id),
    );
    await ping.deleteUser(users[0]!.id);
    await ping.deleteUser(users[2]!.id);
    await h.waitForIdle();
    expect(usersNamed(users[0]!.userName)).toEqual([]);
    expect(usersNamed(users[2]!.userName)).toEqual([]);
    const want = [oneUser(users[1]!.userName).id, oneUser(users[3]!.userName).id].sort();
    expect(oneGroup(`Early del ${n}`).members.sort()).toEqual(want);
    expect(
      (await ping.get(`/Groups/${g.id}`)).body.members.map((m: { value: string }) => m.value).sort(),
    ).toEqual([users[1]!.id, users[3]!.id].sort());
    await expectNoDeadLetters();
  });

  it("a group renamed away and its name taken at once by a new group: both as named", async () => {
    const okta = h.scim("okta");
    const u = await okta.createUser(uniq("freed"));
    const old = await okta.createGroup(`Freed ${n}`, [u.id]);
    await h.waitForIdle();
    const oldId = oneGroup(`Freed ${n}`).id;
    const name = `Freed ${n}`;
    await okta.patchGroup(old.id, [{ op: "replace", value: { displayName: `${name} (archived)` } }]);
    const fresh = await okta.createGroup(name, []);
    await h.waitForIdle();
    expect(oneGroup(`${name} (archived)`)).toMatchObject({ id: oldId, members: [oneUser(u.userName).id] });
    expect(oneGroup(name).members).toEqual([]);
    expect(oneGroup(name).id).not.toBe(oldId);
    expect(fresh.id).not.toBe(old.id);
    await expectNoDeadLetters();
  });

  it("a group deleted and created again with the same name at once: one platform group with the new members", async () => {
    const okta = h.scim("okta");
    const [a, b] = [await okta.createUser(uniq("recreate.a")), await okta.createUser(uniq("recreate.b"))];
    const name = `Recreated ${n}`;
    const g = await okta.createGroup(name, [a.id]);
    await h.waitForIdle();
    await okta.deleteGroup(g.id);
    await okta.createGroup(name, [b.id]);
    await h.waitForIdle();
    expect(oneGroup(name).members).toEqual([oneUser(b.userName).id]);
    await expectNoDeadLetters();
  });
});

describe("membership PATCHes as Entra batches them", () => {
  it("several Add ops, duplicates, members already present and a filter Remove in one PATCH", async () => {
    const entra = h.scim("entra");
    const us = [];
    for (let i = 0; i < 5; i++) us.push(await entra.createUser(uniq("batch")));
    const [a, b, c, d, e] = us as [
      (typeof us)[0],
      (typeof us)[0],
      (typeof us)[0],
      (typeof us)[0],
      (typeof us)[0],
    ];
    const name = `Batch ${n}`;
    const g = await entra.createGroup(name, [a.id, b.id]);
    await h.waitForIdle();
    const res = await entra.patchGroup(g.id, [
      { op: "Add", path: "members", value: [{ value: c.id }, { value: c.id }] },
      { op: "Add", path: "members", value: [{ value: a.id }] },
      { op: "Add", path: "members", value: [{ value: d.id }, { value: e.id }] },
      { op: "Remove", path: `members[value eq "${b.id}"]` },
      { op: "Remove", path: "members", value: [{ value: e.id }] },
    ]);
    expect(res.status).toBe(204);
    const here = (await entra.get(`/Groups/${g.id}`)).body.members
      .map((m: { value: string }) => m.value)
      .sort();
    expect(here).toEqual([a.id, c.id, d.id].sort());
    await h.waitForIdle();
    const want = [a, c, d].map((u) => oneUser(u.userName).id).sort();
    expect(oneGroup(name).members.sort()).toEqual(want);
    await expectNoDeadLetters();
  });

  it("If-Match: a PATCH with the current ETag lands; one with a stale ETag is 412 and never reaches the platform", async () => {
    const okta = h.scim("okta");
    const name = uniq("ifmatch");
    const u = await okta.createUser(name, { displayName: "Before" });
    const read = await okta.get(`/Users/${u.id}`);
    const etag = read.headers.etag as string;
    const auth = { Authorization: "Bearer okta-token", "Content-Type": "application/scim+json" };
    const ok = await h.http
      .patch(`/scim/v2/okta/Users/${u.id}`)
      .set({ ...auth, "If-Match": etag })
      .send({
        schemas: [PATCH_SCHEMA],
        Operations: [{ op: "replace", path: "displayName", value: "After" }],
      });
    expect(ok.status).toBe(200);
    const stale = await h.http
      .patch(`/scim/v2/okta/Users/${u.id}`)
      .set({ ...auth, "If-Match": etag })
      .send({ schemas: [PATCH_SCHEMA], Operations: [{ op: "replace", path: "active", value: false }] });
    expect(stale.status).toBe(412);
    await h.waitForIdle();
    expect(oneUser(name)).toMatchObject({ displayName: "After", active: true });
    await expectNoDeadLetters();
  });
});

describe("emails, phone numbers and the enterprise manager", () => {
  it("Entra moves the primary flag from the work to the home email: one primary on the platform", async () => {
    const entra = h.scim("entra");
    const name = uniq("primary");
    const u = await entra.createUser(name, {
      emails: [
        { value: `w.${name}`, type: "work", primary: true },
        { value: `h.${name}`, type: "home" },
      ],
      phoneNumbers: [{ value: "+1 555 0100", type: "work", primary: true }],
    });
    await h.waitForIdle();
    await entra.patchUser(u.id, [
      { op: "Replace", path: 'emails[type eq "home"].primary', value: "True" },
      { op: "Add", path: 'phoneNumbers[type eq "mobile"].value', value: "+1 555 0199" },
    ]);
    const here = (await entra.get(`/Users/${u.id}`)).body;
    expect(here.emails.filter((e: { primary?: boolean }) => e.primary === true)).toEqual([
      expect.objectContaining({ type: "home" }),
    ]);
    await h.waitForIdle();
    const emails = oneUser(name).emails ?? [];
    expect(emails.filter((e) => e.primary === true).map((e) => e.type)).toEqual(["home"]);
    expect(emails.map((e) => e.value).sort()).toEqual([`h.${name}`, `w.${name}`]);
    await expectNoDeadLetters();
  });

  it("Entra changes a user's manager, then removes it: the platform user follows", async () => {
    const entra = h.scim("entra");
    const [boss1, boss2] = [await entra.createUser(uniq("boss1")), await entra.createUser(uniq("boss2"))];
    const name = uniq("report");
    const u = await entra.createUser(name, { [ENT]: { manager: { value: boss1.id }, department: "R&D" } });
    await h.waitForIdle();
    const mgr = () => (oneUser(name)[ENT] as { manager?: { value: string } } | undefined)?.manager?.value;
    expect(mgr()).toBe(oneUser(boss1.userName).id);
    await entra.patchUser(u.id, [{ op: "Replace", path: `${ENT}:manager`, value: boss2.id }]);
    await h.waitForIdle();
    expect(mgr()).toBe(oneUser(boss2.userName).id);
    await entra.patchUser(u.id, [{ op: "Remove", path: `${ENT}:manager` }]);
    await h.waitForIdle();
    expect(mgr()).toBeUndefined();
    expect((oneUser(name)[ENT] as { department?: string }).department).toBe("R&D");
    await expectNoDeadLetters();
  });

  it("Entra removes the manager with Replace and an empty value (the Known issues page's form)", async () => {
    const entra = h.scim("entra");
    const boss = await entra.createUser(uniq("boss3"));
    const name = uniq("report2");
    const u = await entra.createUser(name, { [ENT]: { manager: boss.id } });
    await h.waitForIdle();
    const mgr = () => (oneUser(name)[ENT] as { manager?: { value: string } } | undefined)?.manager?.value;
    expect(mgr()).toBe(oneUser(boss.userName).id);
    const res = await entra.patchUser(u.id, [{ op: "Replace", path: `${ENT}:manager`, value: "" }]);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    await h.waitForIdle();
    expect(mgr()).toBeUndefined();
    await expectNoDeadLetters();
  });
});

const valuesOf = (userName: string) => {
  const pid = oneUser(userName).id;
  const state = h.emulator.state();
  const byId = new Map(state.attributes.map((a) => [a.id, a.name]));
  return Object.fromEntries(
    state.attributeValues
      .filter((v) => v.userId === pid)
      .map((v) => [byId.get(v.attributeId) ?? String(v.attributeId), v.value]),
  );
};

describe("second pass", () => {
  it("attribute values from the primary phone and email follow a moved primary flag and a removed number", async () => {
    const ol = h.scim("onelogin");
    const name = uniq("phones");
    const u = await ol.createUser(name, {
      emails: [
        { value: `w.${name}`, type: "work", primary: true },
        { value: `h.${name}`, type: "home" },
      ],
      phoneNumbers: [
        { value: "+1 555 0100", type: "work", primary: true },
        { value: "+1 555 0199", type: "mobile" },
      ],
    });
    await h.waitForIdle();
    expect(valuesOf(name)).toMatchObject({ phone: "+1 555 0100", mobile: "+1 555 0199", mail: `w.${name}` });
    await ol.patchUser(u.id, [
      { op: "replace", path: 'phoneNumbers[type eq "mobile"].primary', value: true },
      { op: "replace", path: 'emails[type eq "home"].primary', value: true },
    ]);
    await h.waitForIdle();
    expect(valuesOf(name)).toMatchObject({ phone: "+1 555 0199", mobile: "+1 555 0199", mail: `h.${name}` });
    await ol.patchUser(u.id, [{ op: "remove", path: 'phoneNumbers[type eq "mobile"]' }]);
    await h.waitForIdle();
    const after = valuesOf(name);
    expect(after.mobile ?? null).toBeNull();
    expect(after.phone ?? null).toBeNull();
    await expectNoDeadLetters();
  });

  it("a manager attribute value follows a manager change and its removal", async () => {
    const ol = h.scim("onelogin");
    const [b1, b2] = [await ol.createUser(uniq("ol.boss1")), await ol.createUser(uniq("ol.boss2"))];
    const name = uniq("ol.report");
    const u = await ol.createUser(name, { [ENT]: { manager: { value: b1.id } } });
    await h.waitForIdle();
    expect(valuesOf(name).boss).toBe(oneUser(b1.userName).id);
    await ol.patchUser(u.id, [{ op: "replace", path: `${ENT}:manager.value`, value: b2.id }]);
    await h.waitForIdle();
    expect(valuesOf(name).boss).toBe(oneUser(b2.userName).id);
    await ol.patchUser(u.id, [{ op: "remove", path: `${ENT}:manager` }]);
    await h.waitForIdle();
    expect(valuesOf(name).boss ?? null).toBeNull();
    await expectNoDeadLetters();
  });

  it("Entra: one PATCH renaming, re-keying and disabling a user lands all three", async () => {
    const entra = h.scim("entra");
    const name = uniq("multi.op");
    const u = await entra.createUser(name, { externalId: "aad-m1" });
    await h.waitForIdle();
    const pid = oneUser(name).id;
    const renamed = uniq("multi.op.new");
    const res = await entra.patchUser(u.id, [
      { op: "Replace", path: "userName", value: renamed },
      { op: "Replace", path: "externalId", value: "aad-m2" },
      { op: "Replace", path: "active", value: "False" },
    ]);
    expect(res.status).toBe(200);
    await h.waitForIdle();
    expect(usersNamed(name)).toEqual([]);
    expect(oneUser(renamed)).toMatchObject({ id: pid, externalId: "aad-m2", active: false });
    await expectNoDeadLetters();
  });

  it("an email address changed in case only reaches the platform as written", async () => {
    const okta = h.scim("okta");
    const name = uniq("mailcase");
    const u = await okta.createUser(name, {
      emails: [{ value: "Mixed.Case@Example.com", type: "work", primary: true }],
    });
    await h.waitForIdle();
    const res = await okta.patchUser(u.id, [
      { op: "replace", path: 'emails[type eq "work"].value', value: "mixed.case@example.com" },
    ]);
    expect(res.status).toBe(200);
    expect(res.body.emails[0].value).toBe("mixed.case@example.com");
    await h.waitForIdle();
    expect(oneUser(name).emails?.map((e) => e.value)).toEqual(["mixed.case@example.com"]);
  });

  it("a group renamed in case only is renamed on the platform, same id", async () => {
    const okta = h.scim("okta");
    const name = `case group ${++n}`;
    const g = await okta.createGroup(name, []);
    await h.waitForIdle();
    const pid = oneGroup(name).id;
    await okta.patchGroup(g.id, [{ op: "replace", path: "displayName", value: name.toUpperCase() }]);
    await h.waitForIdle();
    expect(oneGroup(name.toUpperCase()).id).toBe(pid);
    await expectNoDeadLetters();
  });

  it("a group deleted, and another renamed onto its name at once: one platform group under that name, with the renamed group's members", async () => {
    const okta = h.scim("okta");
    const [a, b] = [await okta.createUser(uniq("onto.a")), await okta.createUser(uniq("onto.b"))];
    const name = `Onto ${++n}`;
    const gone = await okta.createGroup(name, [a.id]);
    const mover = await okta.createGroup(`${name} new`, [b.id]);
    await h.waitForIdle();
    const moverPid = oneGroup(`${name} new`).id;
    await okta.deleteGroup(gone.id);
    await okta.patchGroup(mover.id, [{ op: "replace", path: "displayName", value: name }]);
    await h.waitForIdle();
    expect(oneGroup(name)).toMatchObject({ id: moverPid, members: [oneUser(b.userName).id] });
    await expectNoDeadLetters();
  });

  it("a group POST retried after a lost answer: 409, GET by displayName, PATCH of members: one platform group", async () => {
    const okta = h.scim("okta");
    const a = await okta.createUser(uniq("gretry"));
    const name = `Retry group ${++n}`;
    const first = await okta.createGroup(name, [a.id]);
    const dup = await h.http
      .post("/scim/v2/okta/Groups")
      .set({ Authorization: "Bearer okta-token", "Content-Type": "application/scim+json" })
      .send({
        schemas: ["urn:ietf:params:scim:schemas:core:2.0:Group"],
        displayName: name,
        members: [{ value: a.id }],
      });
    expect(dup.status).toBe(409);
    const found = await okta.get(`/Groups?filter=${q(`displayName eq "${name}"`)}`);
    expect(found.body.Resources.map((r: { id: string }) => r.id)).toEqual([first.id]);
    const b = await okta.createUser(uniq("gretry.b"));
    await okta.patchGroup(first.id, [
      { op: "add", path: "members", value: [{ value: a.id }, { value: b.id }] },
    ]);
    await h.waitForIdle();
    expect(oneGroup(name).members.sort()).toEqual([oneUser(a.userName).id, oneUser(b.userName).id].sort());
    await expectNoDeadLetters();
  });

  it("a user renamed onto the userName of a leaver: with onDelete delete it is renamed; with deactivate it is a visible conflict, nothing else changes", async () => {
    for (const source of ["ping", "jumpcloud"] as const) {
      const idp = h.scim(source);
      const taken = uniq(`${source}.leaver`);
      const leaver = await idp.createUser(taken);
      const mover = await idp.createUser(uniq(`${source}.mover`), { displayName: "Mover" });
      await h.waitForIdle();
      const moverPid = oneUser(mover.userName).id;
      const leaverPid = oneUser(taken).id;
      await idp.deleteUser(leaver.id);
      const res = await idp.patchUser(mover.id, [{ op: "replace", path: "userName", value: taken }]);
      expect(res.status).toBe(200);
      await h.waitForIdle();
      const status = (await h.admin().get(`/sources/${source}/users/${mover.id}`)).body;
      if (source === "ping") {
        expect(oneUser(taken)).toMatchObject({ id: moverPid, active: true });
        expect(status.state).toBe("synced");
      } else {
        // the leaver's deactivated account keeps the name; the mover keeps its account, active
        expect(oneUser(taken)).toMatchObject({ id: leaverPid, active: false });
        expect(snap().users.find((u) => u.id === moverPid)).toMatchObject({
          userName: mover.userName,
          active: true,
        });
        expect(status).toMatchObject({ state: "dead", lastError: { code: "platform_conflict" } });
      }
    }
  });

  it("group PATCHes chained on the ETag of each 204 (If-Match) all land; a stale one is 412", async () => {
    const okta = h.scim("okta");
    const us = [
      await okta.createUser(uniq("etag.a")),
      await okta.createUser(uniq("etag.b")),
      await okta.createUser(uniq("etag.c")),
    ];
    const name = `Etag ${++n}`;
    const g = await okta.createGroup(name, []);
    const auth = { Authorization: "Bearer okta-token", "Content-Type": "application/scim+json" };
    let etag = (await okta.get(`/Groups/${g.id}`)).headers.etag as string;
    const first = etag;
    for (const u of us) {
      const res = await h.http
        .patch(`/scim/v2/okta/Groups/${g.id}`)
        .set({ ...auth, "If-Match": etag })
        .send({
          schemas: [PATCH_SCHEMA],
          Operations: [{ op: "add", path: "members", value: [{ value: u.id }] }],
        });
      expect(res.status).toBe(204);
      expect(res.headers.etag).toBeTruthy();
      etag = res.headers.etag as string;
    }
    const stale = await h.http
      .patch(`/scim/v2/okta/Groups/${g.id}`)
      .set({ ...auth, "If-Match": first })
      .send({ schemas: [PATCH_SCHEMA], Operations: [{ op: "replace", path: "members", value: [] }] });
    expect(stale.status).toBe(412);
    await h.waitForIdle();
    expect(oneGroup(name).members).toHaveLength(3);
    await expectNoDeadLetters();
  });
});

describe("third pass: managers and full replacements", () => {
  it("Workday via Entra: a CEO who is her own manager lands, with herself as manager", async () => {
    const entra = h.scim("entra");
    const name = uniq("ceo");
    const u = await entra.createUser(name);
    await entra.patchUser(u.id, [{ op: "Add", path: `${ENT}:manager`, value: u.id }]);
    await h.waitForIdle();
    const pu = oneUser(name);
    expect((pu[ENT] as { manager?: { value: string } } | undefined)?.manager?.value).toBe(pu.id);
    await expectNoDeadLetters();
  });

  it("two users created as each other's manager in one go: both land with the other as manager", async () => {
    const entra = h.scim("entra");
    const [na, nb] = [uniq("cycle.a"), uniq("cycle.b")];
    const a = await entra.createUser(na);
    const b = await entra.createUser(nb, { [ENT]: { manager: { value: a.id } } });
    await entra.patchUser(a.id, [{ op: "Add", path: `${ENT}:manager`, value: b.id }]);
    await h.waitForIdle();
    const mgr = (x: PUser) => (x[ENT] as { manager?: { value: string } } | undefined)?.manager?.value;
    expect(mgr(oneUser(na))).toBe(oneUser(nb).id);
    expect(mgr(oneUser(nb))).toBe(oneUser(na).id);
    await expectNoDeadLetters();
  });

  it("JumpCloud full PUT leaving out emails, name, displayName and the enterprise extension clears them on the platform", async () => {
    const jc = h.scim("okta");
    const boss = await jc.createUser(uniq("put.boss"));
    const name = uniq("put.clear");
    const u = await jc.createUser(name, {
      name: { givenName: "Put", familyName: "Clear" },
      displayName: "Put Clear",
      emails: [{ value: `w.${name}`, type: "work", primary: true }],
      [ENT]: { department: "Ops", costCenter: "CC1", manager: { value: boss.id } },
    });
    await h.waitForIdle();
    expect(oneUser(name)).toMatchObject({ displayName: "Put Clear", name: { givenName: "Put" } });
    const res = await jc.put(`/Users/${u.id}`, { schemas: [USER_SCHEMA], userName: name, active: true });
    expect(res.status).toBe(200);
    await h.waitForIdle();
    const pu = oneUser(name);
    expect(pu.displayName).toBeUndefined();
    expect(pu.name).toBeUndefined();
    expect(pu.emails).toBeUndefined();
    expect(pu[ENT]).toBeUndefined();
    await expectNoDeadLetters();
  });

  it("a DELETE with a stale If-Match is 412 and the user stays active on the platform", async () => {
    const okta = h.scim("okta");
    const name = uniq("del.ifmatch");
    const u = await okta.createUser(name);
    const etag = (await okta.get(`/Users/${u.id}`)).headers.etag as string;
    await okta.patchUser(u.id, [{ op: "replace", path: "displayName", value: "moved" }]);
    const del = await h.http
      .delete(`/scim/v2/okta/Users/${u.id}`)
      .set({ Authorization: "Bearer okta-token", "If-Match": etag });
    expect(del.status).toBe(412);
    await h.waitForIdle();
    expect(oneUser(name)).toMatchObject({ active: true, displayName: "moved" });
  });
});

describe("fourth pass: bad input is refused whole", () => {
  const refusals: Array<[string, unknown[]]> = [
    [
      "an unknown op",
      [
        { op: "Replace", path: "displayName", value: "half" },
        { op: "merge", path: "title", value: "x" },
      ],
    ],
    [
      "active that is not a boolean",
      [
        { op: "Replace", path: "displayName", value: "half" },
        { op: "Replace", path: "active", value: "maybe" },
      ],
    ],
    [
      "an empty userName",
      [
        { op: "Replace", path: "displayName", value: "half" },
        { op: "Replace", path: "userName", value: "" },
      ],
    ],
    [
      "a userName of spaces",
      [
        { op: "Replace", path: "displayName", value: "half" },
        { op: "Replace", path: "userName", value: "   " },
      ],
    ],
    [
      "an email value that is an object",
      [
        { op: "Replace", path: "displayName", value: "half" },
        { op: "Add", path: 'emails[type eq "work"].value', value: { v: 1 } },
      ],
    ],
    [
      "a path that does not parse",
      [
        { op: "Replace", path: "displayName", value: "half" },
        { op: "Replace", path: 'emails[type eq "work"', value: "x@example.com" },
      ],
    ],
    [
      "active false then a bad path",
      [
        { op: "Replace", path: "active", value: "False" },
        { op: "Remove", path: "emails[" },
      ],
    ],
  ];
  for (const [what, ops] of refusals) {
    it(`Entra multi-op PATCH with ${what} last: 400 with a SCIM error, nothing applied here or on the platform`, async () => {
      const entra = h.scim("entra");
      const name = uniq("refused");
      const u = await entra.createUser(name, { displayName: "whole" });
      await h.waitForIdle();
      const before = (await entra.get(`/Users/${u.id}`)).body;
      const res = await entra.patchUser(u.id, ops);
      expect(res.status, JSON.stringify(res.body)).toBe(400);
      expect(res.body.schemas).toEqual(["urn:ietf:params:scim:api:messages:2.0:Error"]);
      expect(typeof res.body.scimType).toBe("string");
      expect((await entra.get(`/Users/${u.id}`)).body).toEqual(before);
      await h.waitForIdle();
      expect(oneUser(name)).toMatchObject({ displayName: "whole", active: true, userName: name });
    });
  }

  it("a group PATCH adding a known member and an unknown id: the answer says what happened and the platform matches it", async () => {
    const okta = h.scim("okta");
    const a = await okta.createUser(uniq("known"));
    const name = `Unknown member ${++n}`;
    const g = await okta.createGroup(name, []);
    await h.waitForIdle();
    const res = await okta.patchGroup(g.id, [
      {
        op: "add",
        path: "members",
        value: [{ value: a.id }, { value: "00000000-0000-4000-8000-000000000000" }],
      },
    ]);
    const here = ((await okta.get(`/Groups/${g.id}`)).body.members ?? []).map(
      (m: { value: string }) => m.value,
    );
    await h.waitForIdle();
    const there = oneGroup(name).members;
    if (res.status === 400) {
      expect(here).toEqual([]);
      expect(there).toEqual([]);
    } else {
      expect(res.status).toBe(204);
      expect(here).toEqual([a.id]);
      expect(there).toEqual([oneUser(a.userName).id]);
    }
    await expectNoDeadLetters();
  });

  it("a group POST naming a user deleted a moment before: the group lands without it", async () => {
    const okta = h.scim("okta");
    const [a, b] = [await okta.createUser(uniq("gone.a")), await okta.createUser(uniq("gone.b"))];
    await okta.deleteUser(b.id);
    const name = `Named gone ${++n}`;
    const res = await h.http
      .post("/scim/v2/okta/Groups")
      .set({ Authorization: "Bearer okta-token", "Content-Type": "application/scim+json" })
      .send({
        schemas: ["urn:ietf:params:scim:schemas:core:2.0:Group"],
        displayName: name,
        members: [{ value: a.id }, { value: b.id }],
      });
    await h.waitForIdle();
    if (res.status === 201) {
      expect(res.body.members.map((m: { value: string }) => m.value)).toEqual([a.id]);
      expect(oneGroup(name).members).toEqual([oneUser(a.userName).id]);
    } else {
      expect(res.status).toBe(400);
      expect(groupNamed(name)).toEqual([]);
    }
    await expectNoDeadLetters();
  });
});

describe("fifth pass: Entra's parallel membership writes while the platform is slow", () => {
  it("30 users created and added to one group by 30 concurrent PATCHes, 10 removed concurrently: the platform holds the 20", async () => {
    const entra = h.scim("entra");
    const name = `Parallel ${++n}`;
    const g = await entra.createGroup(name, []);
    h.emulator.addFault({ type: "slow", delayMs: 40, match: { operation: "patchGroup" } });
    try {
      const users = await Promise.all(
        Array.from({ length: 30 }, (_, i) => entra.createUser(uniq(`par${i}`))),
      );
      const adds = await Promise.all(
        users.map((u) => entra.patchGroup(g.id, [{ op: "Add", path: "members", value: [{ value: u.id }] }])),
      );
      expect(adds.map((r) => r.status)).toEqual(users.map(() => 204));
      const gone = users.slice(0, 10);
      const removes = await Promise.all(
        gone.map((u) => entra.patchGroup(g.id, [{ op: "Remove", path: `members[value eq "${u.id}"]` }])),
      );
      expect(removes.map((r) => r.status)).toEqual(gone.map(() => 204));
      // and one member toggled ten times in a row, ending in
      const t = users[15]!;
      for (let i = 0; i < 10; i++) {
        const op =
          i % 2 === 0
            ? { op: "Remove", path: `members[value eq "${t.id}"]` }
            : { op: "Add", path: "members", value: [{ value: t.id }] };
        await entra.patchGroup(g.id, [op]);
      }
      await h.waitForIdle();
      const want = users
        .slice(10)
        .map((u) => oneUser(u.userName).id)
        .sort();
      expect(oneGroup(name).members.sort()).toEqual(want);
    } finally {
      h.emulator.clearFaults();
    }
    await expectNoDeadLetters();
  });
});

/** Watches the platform while `run` goes on: every state a user of that name was seen in. */
async function watchActive(userName: string, run: () => Promise<void>): Promise<boolean[]> {
  const seen: boolean[] = [];
  let stop = false;
  const loop = (async () => {
    while (!stop) {
      for (const u of usersNamed(userName)) if (seen.at(-1) !== u.active) seen.push(u.active);
      await new Promise((r) => setTimeout(r, 1));
    }
  })();
  try {
    await run();
  } finally {
    stop = true;
    await loop;
  }
  return seen;
}

describe("sixth pass: pre-hires are never let in, not even for a moment", () => {
  it("a user created with active false (Entra pre-hire, Okta staged) is created inactive and never active", async () => {
    const entra = h.scim("entra");
    const name = uniq("prehire");
    const seen = await watchActive(name, async () => {
      await entra.createUser(name, { active: "False" });
      await h.waitForIdle();
    });
    expect(seen).toEqual([false]);
  });

  it("a leaver re-created as a pre-hire (active false) adopts the deactivated account and stays inactive", async () => {
    const entra = h.scim("entra");
    const name = uniq("rehire.pre");
    const old = await entra.createUser(name);
    await h.waitForIdle();
    const pid = oneUser(name).id;
    await entra.deleteUser(old.id);
    await h.waitForIdle();
    expect(oneUser(name).active).toBe(false);
    const seen = await watchActive(name, async () => {
      await entra.createUser(name, { active: false });
      await h.waitForIdle();
    });
    expect(seen).toEqual([false]);
    expect(oneUser(name).id).toBe(pid);
    await expectNoDeadLetters();
  });

  it("a leaver deleted and re-created as a pre-hire at once: inactive at the end, and not active after the delete", async () => {
    const entra = h.scim("entra");
    const name = uniq("rehire.quick");
    const old = await entra.createUser(name);
    await h.waitForIdle();
    const seen = await watchActive(name, async () => {
      await entra.deleteUser(old.id);
      await entra.createUser(name, { active: false });
      await h.waitForIdle();
    });
    expect(seen).toEqual([true, false]);
    await expectNoDeadLetters();
  });

  it("an unowned active platform account adopted by a pre-hire is deactivated", async () => {
    const entra = h.scim("entra");
    const name = uniq("adopt.pre");
    h.emulator.seed({ users: [{ userName: name, active: true }] });
    await entra.createUser(name.toUpperCase(), { active: false });
    await h.waitForIdle();
    expect(oneUser(name).active).toBe(false);
    await expectNoDeadLetters();
  });
});

describe("seventh pass: changes that land while the platform is slow to answer", () => {
  const slow = (operation: string, delayMs = 150) =>
    h.emulator.addFault({ type: "slow", delayMs, match: { operation } });

  it("deactivated, reactivated and deactivated again while each bulk call takes 150 ms: inactive at the end", async () => {
    const entra = h.scim("entra");
    const name = uniq("flap");
    const u = await entra.createUser(name);
    await h.waitForIdle();
    slow("bulkUsers");
    try {
      for (const value of ["False", "True", "False", "True", "False"]) {
        await entra.patchUser(u.id, [{ op: "Replace", path: "active", value }]);
        await new Promise((r) => setTimeout(r, 60));
      }
      await h.waitForIdle();
    } finally {
      h.emulator.clearFaults();
    }
    expect(oneUser(name).active).toBe(false);
    await expectNoDeadLetters();
  });

  it("created, put in a group and deleted (onDelete: delete) while the create takes 150 ms: gone, and not in the group", async () => {
    const ping = h.scim("ping");
    const keep = await ping.createUser(uniq("slow.keep"));
    await h.waitForIdle();
    slow("createUser");
    slow("createGroup");
    const name = uniq("slow.gone");
    const gname = `Slow ${n}`;
    try {
      const u = await ping.createUser(name);
      const g = await ping.createGroup(gname, [u.id, keep.id]);
      await new Promise((r) => setTimeout(r, 50));
      await ping.deleteUser(u.id);
      await ping.patchGroup(g.id, [{ op: "replace", path: "displayName", value: `${gname} renamed` }]);
      await h.waitForIdle();
    } finally {
      h.emulator.clearFaults();
    }
    expect(usersNamed(name)).toEqual([]);
    expect(groupNamed(gname)).toEqual([]);
    expect(oneGroup(`${gname} renamed`).members).toEqual([oneUser(keep.userName).id]);
    await expectNoDeadLetters();
  });

  it("renamed twice while the create takes 150 ms: one platform user under the last name", async () => {
    const okta = h.scim("okta");
    slow("createUser");
    const [n1, n2, n3] = [uniq("slowren.1"), uniq("slowren.2"), uniq("slowren.3")];
    try {
      const u = await okta.createUser(n1);
      await new Promise((r) => setTimeout(r, 40));
      await okta.patchUser(u.id, [{ op: "replace", path: "userName", value: n2 }]);
      await okta.patchUser(u.id, [{ op: "replace", path: "userName", value: n3 }]);
      await h.waitForIdle();
    } finally {
      h.emulator.clearFaults();
    }
    expect(usersNamed(n1)).toEqual([]);
    expect(usersNamed(n2)).toEqual([]);
    oneUser(n3);
    await expectNoDeadLetters();
  });

  it("a group created with members while their creates are slow, a member removed meanwhile: the group ends with the rest", async () => {
    const okta = h.scim("okta");
    slow("createUser", 100);
    const gname = `Slow members ${++n}`;
    try {
      const us = await Promise.all([0, 1, 2, 3].map((i) => okta.createUser(uniq(`slowm${i}`))));
      const g = await okta.createGroup(
        gname,
        us.map((u) => u.id),
      );
      await okta.patchGroup(g.id, [{ op: "remove", path: `members[value eq "${us[1]!.id}"]` }]);
      await okta.patchUser(us[2]!.id, [{ op: "replace", path: "active", value: false }]);
      await h.waitForIdle();
      const want = [us[0]!, us[2]!, us[3]!].map((u) => oneUser(u.userName).id).sort();
      expect(oneGroup(gname).members.sort()).toEqual(want);
      expect(oneUser(us[2]!.userName).active).toBe(false);
    } finally {
      h.emulator.clearFaults();
    }
    await expectNoDeadLetters();
  });
});

describe("eighth pass: what an adopted account keeps from before", () => {
  it("a leaver re-hired under the same userName: the old department (profile and attribute value) is not kept", async () => {
    const ol = h.scim("onelogin");
    const name = uniq("rehire.attrs");
    const old = await ol.createUser(name, {
      displayName: "Old Person",
      phoneNumbers: [{ value: "+1 555 0111", type: "mobile", primary: true }],
      [ENT]: { department: "Sales" },
    });
    await h.waitForIdle();
    expect(valuesOf(name)).toMatchObject({ phone: "+1 555 0111", mobile: "+1 555 0111" });
    await ol.deleteUser(old.id);
    await h.waitForIdle();
    await ol.createUser(name, { displayName: "New Person" });
    await h.waitForIdle();
    const pu = oneUser(name);
    expect(pu).toMatchObject({ active: true, displayName: "New Person" });
    expect(pu[ENT]).toBeUndefined();
    const values = valuesOf(name);
    expect(values.phone ?? null).toBeNull();
    expect(values.mobile ?? null).toBeNull();
    await expectNoDeadLetters();
  });

  it("an unowned platform account adopted by userName takes the source's profile and attribute values, nothing of its own", async () => {
    const ol = h.scim("onelogin");
    const name = uniq("adopt.stale");
    h.emulator.seed({
      users: [
        {
          userName: name,
          displayName: "Stale",
          emails: [{ value: "stale@example.com", type: "work", primary: true }],
          [ENT]: { department: "Stale dept" },
        },
      ],
      ...(h.emulator.state().attributes.some((a) => a.name === "mobile")
        ? {}
        : { attributes: [{ name: "mobile", type: "string" as const }] }),
      attributeValues: [{ userId: name, name: "mobile", value: "+1 555 0000" }],
    });
    expect(valuesOf(name).mobile).toBe("+1 555 0000");
    await ol.createUser(name, { displayName: "Fresh" });
    await h.waitForIdle();
    const pu = oneUser(name);
    expect(pu.displayName).toBe("Fresh");
    expect(pu.emails).toBeUndefined();
    expect(pu[ENT]).toBeUndefined();
    expect(valuesOf(name).mobile ?? null).toBeNull();
    await expectNoDeadLetters();
  });
});

describe("ninth pass: adopting what is already on the platform", () => {
  it("an unowned platform group of the same name in another case is adopted: renamed as sent, members exactly the source's", async () => {
    const okta = h.scim("okta");
    const [a, b] = [await okta.createUser(uniq("adopt.ga")), await okta.createUser(uniq("adopt.gb"))];
    const stranger = uniq("stranger");
    await h.waitForIdle();
    const name = `Adopted Group ${++n}`;
    h.emulator.seed({
      users: [{ userName: stranger }],
      groups: [{ displayName: name.toLowerCase(), members: [stranger, a.userName] }],
    });
    const seeded = groupNamed(name.toLowerCase())[0]!;
    await okta.createGroup(name, [a.id, b.id]);
    await h.waitForIdle();
    const g = oneGroup(name);
    expect(g.id).toBe(seeded.id);
    expect(g.members.sort()).toEqual([oneUser(a.userName).id, oneUser(b.userName).id].sort());
    await expectNoDeadLetters();
  });
});

describe("tenth pass: removals racing deletions on a slow platform", () => {
  it("onDelete delete: members removed and deleted while group PATCHes take 150 ms, others added meanwhile", async () => {
    const ping = h.scim("ping");
    const us = await Promise.all([0, 1, 2, 3, 4, 5].map((i) => ping.createUser(uniq(`race${i}`))));
    const name = `Race ${++n}`;
    const g = await ping.createGroup(
      name,
      us.slice(0, 4).map((u) => u.id),
    );
    await h.waitForIdle();
    h.emulator.addFault({ type: "slow", delayMs: 150, match: { operation: "patchGroup" } });
    try {
      await ping.patchGroup(g.id, [{ op: "Remove", path: "members", value: [{ value: us[0]!.id }] }]);
      await ping.deleteUser(us[0]!.id);
      await ping.patchGroup(g.id, [{ op: "Add", path: "members", value: [{ value: us[4]!.id }] }]);
      await new Promise((r) => setTimeout(r, 60));
      await ping.deleteUser(us[1]!.id); // deleted without a removal first: the directory drops it
      await ping.patchGroup(g.id, [{ op: "Add", path: "members", value: [{ value: us[5]!.id }] }]);
      await h.waitForIdle();
    } finally {
      h.emulator.clearFaults();
    }
    expect(usersNamed(us[0]!.userName)).toEqual([]);
    expect(usersNamed(us[1]!.userName)).toEqual([]);
    const want = [us[2]!, us[3]!, us[4]!, us[5]!].map((u) => oneUser(u.userName).id).sort();
    expect(oneGroup(name).members.sort()).toEqual(want);
    await expectNoDeadLetters();
  });
});

describe("last: after all of the traffic above", () => {
  it("a reconciliation of every source finds no drift, and a resync of every source writes nothing", async () => {
    await h.waitForIdle();
    for (const source of ["okta", "entra", "ping", "onelogin"]) {
      const res = await h.admin().post(`/sources/${source}/reconcile`, { dryRun: true });
      expect(res.status).toBe(202);
      let run: { state: string; counts: Record<string, number> } | undefined;
      for (let i = 0; i < 600; i++) {
        run = (await h.admin().get(`/reconcile-runs/${res.body.runId}`)).body;
        if (run && !["queued", "running"].includes(run.state)) break;
        await new Promise((r) => setTimeout(r, 25));
      }
      expect(run?.state, source).toBe("succeeded");
      // Leavers deactivated under onDelete: deactivate are no longer owned: orphans, reported only.
      const { orphans: _orphans, ...drift } = run?.counts ?? {};
      expect(drift, `${source}: ${JSON.stringify(run)}`).toEqual({
        missing: 0,
        changed: 0,
        activeMismatch: 0,
        membership: 0,
        attributeValues: 0,
        deletedBehind: 0,
      });
    }
    const writes = h.emulator.counters().writes;
    for (const source of ["okta", "entra", "ping", "onelogin"]) {
      expect((await h.admin().post(`/sources/${source}/resync`, {})).status).toBe(202);
    }
    await h.waitForIdle();
    expect(h.emulator.counters().writes).toBe(writes);
    await expectNoDeadLetters();
  });
});
