/**
 * Acceptance, end to end: traffic shaped like OneLogin, JumpCloud, PingFederate, Google Workspace,
 * Keycloak and Okta's PUT-only apps, through a whole bridge into the strict platform emulator.
 * Every case waits for the bridge to be idle and then checks the emulator's state.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PATCH_SCHEMA, type TestBridge, USER_SCHEMA, startTestBridge } from "../helpers/bridge-harness.js";

const ENTERPRISE = "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User";
const SOURCES = ["okta", "onelogin", "jumpcloud", "ping", "google", "keycloak"] as const;

let h: TestBridge;

beforeAll(async () => {
  h = await startTestBridge("acceptance-dialects", {
    sources: Object.fromEntries(SOURCES.map((s) => [s, { tokens: [`${s}-token`] }])),
    config: {
      sync: {
        concurrency: 32,
        attempts: 8,
        lifecycleBatchWindowMs: 50,
        sweepIntervalMs: 500,
        sweepAfterMs: 1_000,
      },
    },
  });
});
afterAll(async () => {
  await h?.close();
});

function platformUser(userName: string) {
  const u = h.platformUsers().get(userName.toLowerCase());
  if (!u) throw new Error(`${userName} is not on the platform`);
  return u as typeof u & {
    name?: { givenName?: string; familyName?: string };
    emails?: Array<{ value: string; primary?: boolean }>;
    displayName?: string;
  };
}

function platformGroup(displayName: string) {
  const groups = (
    h.emulator.state() as unknown as {
      groups: Array<{ id: string; displayName: string; members: string[] }>;
    }
  ).groups;
  const g = groups.find((x) => x.displayName === displayName || x.displayName.endsWith(displayName));
  if (!g) throw new Error(`group ${displayName} is not on the platform`);
  return g;
}

const platformIdOf = (userName: string) => platformUser(userName).id;

describe("Okta app with PUT for every change", () => {
  it("profile change, deactivation and reactivation by full PUT all reach the platform", async () => {
    const scim = h.scim("okta");
    const base = {
      schemas: [USER_SCHEMA],
      userName: "put.only@example.com",
      externalId: "00uPUTONLY",
      name: { givenName: "Put", familyName: "Only" },
      emails: [{ value: "put.only@example.com", primary: true, type: "work" }],
      active: true,
    };
    const created = await scim.createUser(base.userName, base);
    await h.waitForIdle();
    expect(platformUser(base.userName).active).toBe(true);

    const renamed = await scim.put(`/Users/${created.id}`, {
      ...base,
      id: created.id,
      name: { givenName: "Putt", familyName: "Only" },
    });
    expect(renamed.status, JSON.stringify(renamed.body)).toBe(200);
    await h.waitForIdle();
    expect(platformUser(base.userName).name?.givenName).toBe("Putt");

    // Okta sends the password on PUT when password sync is on: accepted, never echoed or forwarded.
    const off = await scim.put(`/Users/${created.id}`, {
      ...base,
      id: created.id,
      active: false,
      password: "t0p-s3cret!",
    });
    expect(off.status).toBe(200);
    expect(off.body).not.toHaveProperty("password");
    expect(off.body.active).toBe(false);
    await h.waitForIdle();
    expect(platformUser(base.userName).active).toBe(false);
    // The PUT without the changed givenName put it back, as a full replace must (RFC 7644 §3.5.1).
    expect(platformUser(base.userName).name?.givenName).toBe("Put");

    const on = await scim.put(`/Users/${created.id}`, {
      ...base,
      id: created.id,
      emails: [{ value: "put.only+new@example.com", primary: true, type: "work" }],
    });
    expect(on.status).toBe(200);
    await h.waitForIdle();
    const after = platformUser(base.userName);
    expect(after.active).toBe(true);
    expect(after.emails?.map((e) => e.value)).toEqual(["put.only+new@example.com"]);
    expect(JSON.stringify(h.emulator.state())).not.toContain("t0p-s3cret!");
    expect(JSON.stringify(h.emulator.requests())).not.toContain("t0p-s3cret!");
  });
});

describe("PATCH paths as PingFederate, Keycloak and Google Workspace write them", () => {
  it("a path with the core schema URN prefix sets name.givenName", async () => {
    const scim = h.scim("ping");
    const u = await scim.createUser("urn.path@example.com", {
      name: { givenName: "Old", familyName: "Name" },
    });
    const res = await scim.patchUser(u.id, [
      { op: "replace", path: "urn:ietf:params:scim:schemas:core:2.0:User:name.givenName", value: "New" },
    ]);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.name).toEqual({ givenName: "New", familyName: "Name" });
    await h.waitForIdle();
    expect(platformUser("urn.path@example.com").name).toMatchObject({ givenName: "New", familyName: "Name" });
  });

  it("`emails[primary eq true].value` replaces the primary address only", async () => {
    const scim = h.scim("google");
    const u = await scim.createUser("primary.mail@example.com", {
      emails: [
        { value: "old@example.com", primary: true, type: "work" },
        { value: "other@example.com", type: "home" },
      ],
    });
    const res = await scim.patchUser(u.id, [
      { op: "replace", path: "emails[primary eq true].value", value: "new@example.com" },
    ]);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.emails).toEqual([
      { value: "new@example.com", primary: true, type: "work" },
      { value: "other@example.com", type: "home" },
    ]);
    await h.waitForIdle();
    const emails = platformUser("primary.mail@example.com").emails ?? [];
    expect(emails.find((e) => e.primary)?.value).toBe("new@example.com");
  });

  it("Google Workspace deactivation: no-path replace of `active` with a value object", async () => {
    const scim = h.scim("google");
    const u = await scim.createUser("gw.leaver@example.com");
    await h.waitForIdle();
    const res = await scim.patchUser(u.id, [{ op: "replace", value: { active: false } }]);
    expect(res.status).toBe(200);
    await h.waitForIdle();
    expect(platformUser("gw.leaver@example.com").active).toBe(false);
  });

  it("Keycloak PUT echoing id, meta, groups and the enterprise extension is accepted", async () => {
    const scim = h.scim("keycloak");
    const u = await scim.createUser("kc.user@example.com", { name: { givenName: "K", familyName: "C" } });
    const got = await scim.get(`/Users/${u.id}`);
    const res = await scim.put(`/Users/${u.id}`, {
      ...got.body,
      schemas: [USER_SCHEMA, ENTERPRISE],
      displayName: "Kay Cee",
      groups: [],
      [ENTERPRISE]: { department: "R&D", employeeNumber: "42" },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body[ENTERPRISE]).toMatchObject({ department: "R&D" });
    await h.waitForIdle();
    expect(platformUser("kc.user@example.com").displayName).toBe("Kay Cee");
  });

  it("a non-ASCII userName reaches the platform unchanged", async () => {
    await h.scim("keycloak").createUser("José.Müller@exämple.com", { displayName: "José Müller 山田" });
    await h.waitForIdle();
    expect(platformUser("José.Müller@exämple.com").userName).toBe("José.Müller@exämple.com");
  });
});

describe("groups as OneLogin and JumpCloud push them", () => {
  it('`op: "Add"` with member objects carrying display adds them; a value-filter remove takes one out', async () => {
    const scim = h.scim("onelogin");
    const a = await scim.createUser("ol.a@example.com");
    const b = await scim.createUser("ol.b@example.com");
    const g = await scim.createGroup("OneLogin Role");
    const add = await scim.patchGroup(g.id, [
      {
        op: "Add",
        path: "members",
        value: [
          { value: a.id, display: "ol.a@example.com" },
          { value: b.id, display: "ol.b@example.com" },
        ],
      },
    ]);
    expect([200, 204]).toContain(add.status);
    await h.waitForIdle();
    expect(platformGroup("OneLogin Role").members.sort()).toEqual(
      [platformIdOf("ol.a@example.com"), platformIdOf("ol.b@example.com")].sort(),
    );
    const remove = await scim.patchGroup(g.id, [{ op: "Remove", path: `members[value eq "${a.id}"]` }]);
    expect([200, 204]).toContain(remove.status);
    await h.waitForIdle();
    expect(platformGroup("OneLogin Role").members).toEqual([platformIdOf("ol.b@example.com")]);
  });

  it("JumpCloud: one PATCH adding 1,000 members lands every member on the platform", async () => {
    const scim = h.scim("jumpcloud");
    const ids: string[] = [];
    for (let i = 0; i < 1000; i += 50) {
      const batch = await Promise.all(
        Array.from({ length: 50 }, (_, k) => scim.createUser(`jc.${i + k}@example.com`)),
      );
      ids.push(...batch.map((u) => u.id));
    }
    const g = await scim.createGroup("JumpCloud Big");
    const res = await scim.patchGroup(g.id, [
      {
        op: "add",
        path: "members",
        value: ids.map((value, i) => ({ value, display: `jc.${i}@example.com` })),
      },
    ]);
    expect([200, 204], JSON.stringify(res.body).slice(0, 300)).toContain(res.status);
    await h.waitForIdle(25_000);
    const members = new Set(platformGroup("JumpCloud Big").members);
    expect(members.size).toBe(1000);
    expect(members.has(platformIdOf("jc.999@example.com"))).toBe(true);
    expect(h.emulator.violations()).toEqual([]);
  }, 30_000);
});

describe("races", () => {
  it("the same user created four times at once is one user on the platform", async () => {
    const http = h.http;
    const send = () =>
      http
        .post("/scim/v2/okta/Users")
        .set({ Authorization: "Bearer okta-token", "Content-Type": "application/scim+json" })
        .send({ schemas: [USER_SCHEMA], userName: "race@example.com", active: true });
    const statuses = (await Promise.all([send(), send(), send(), send()])).map((r) => r.status).sort();
    expect(statuses).toEqual([201, 409, 409, 409]);
    await h.waitForIdle();
    const users = (h.emulator.state() as unknown as { users: Array<{ userName: string }> }).users;
    expect(users.filter((u) => u.userName.toLowerCase() === "race@example.com")).toHaveLength(1);
  });

  it("a PATCH with an empty Operations array leaves the platform as it was", async () => {
    const scim = h.scim("okta");
    const u = await scim.createUser("noop@example.com", { displayName: "Same" });
    await h.waitForIdle();
    const writes = () => h.emulator.requests().filter((r) => r.method !== "GET").length;
    const before = writes();
    const res = await scim.patchUser(u.id, []);
    expect(res.status).toBeLessThan(500);
    await h.waitForIdle();
    expect(platformUser("noop@example.com").displayName).toBe("Same");
    expect(writes()).toBe(before);
    expect(h.emulator.violations()).toEqual([]);
    void PATCH_SCHEMA;
  });
});
