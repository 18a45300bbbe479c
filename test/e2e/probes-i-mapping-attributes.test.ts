/**
 * Probes-i (mapping): typed user attribute values as identity providers really send them, end to
 * end (SCIM intake, workers, the strict emulator over HTTP, real Redis). Every platform type of the
 * contract (string, number, boolean, string_array, number_array) is fed numbers as strings,
 * booleans as strings and 1/0, empty strings, nulls, arrays for scalars and scalars for arrays,
 * long and non-ASCII strings, enterprise and value-filter paths; a value removed at the source must
 * be removed on the platform; a converged user synced again makes zero write calls (invariant 4);
 * reconciliation counts `attributeValues` drift and repairs it; a rule's source path changed in
 * config between runs moves the value.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import supertest from "supertest";
import { startBridge } from "../../src/bridge.js";
import { buildConfig } from "../../src/config/load-config.js";
import { createLogger } from "../../src/observability/logger.js";
import { E2E_ADMIN_TOKEN, type TestBridge, USER_SCHEMA, startTestBridge } from "../helpers/bridge-harness.js";
import { waitFor } from "../helpers/redis-test-prefix.js";

const ENT = "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User";
const SETTLED = ["succeeded", "failed", "awaiting-confirmation", "discarded"];

let h: TestBridge;

const RULES = {
  empNo: { from: `${ENT}:employeeNumber`, type: "number" },
  cost: { from: `${ENT}:costCenter`, type: "string" },
  dept: { from: `${ENT}:department`, type: "string" },
  depts: { from: `${ENT}:division`, type: "string_array" },
  boss: { from: `${ENT}:manager.value`, type: "string" },
  workMail: { from: 'emails[type eq "work"].value', type: "string" },
  allMail: { from: "emails.value", type: "string_array" },
  contractor: { from: "title", type: "boolean" },
  levels: { from: "nickName", type: "number_array" },
  locale: { from: "locale", type: "string" },
  // RFC 7644 §3.10: a core attribute may be named with its schema URN too.
  family: { from: "urn:ietf:params:scim:schemas:core:2.0:User:name.familyName", type: "string" },
  homeMail: {
    from: 'urn:ietf:params:scim:schemas:core:2.0:User:emails[type eq "home"].value',
    type: "string",
  },
} as const;

beforeAll(async () => {
  h = await startTestBridge("probes-i-mapping-attrs", {
    sources: { hr: { tokens: ["hr-token"], attributes: { ...RULES } } },
  });
});
afterAll(async () => {
  await h?.close();
});

const pid = (userName: string) => h.platformUsers().get(userName.toLowerCase())?.id as string;
const values = (userName: string): Record<string, unknown> =>
  Object.fromEntries(h.emulator.data.attributes.valuesOf(pid(userName)).map((v) => [v.name, v.value]));
const entity = async (id: string) =>
  (await h.admin().get(`/sources/hr/users/${id}`)).body as {
    state: string;
    lastError: { code?: string } | null;
  };
const writes = () => h.emulator.counters().writes;
const settle = (path: string) =>
  waitFor(
    async () => {
      const res = await h.admin().get(path);
      return SETTLED.includes(res.body.state) ? res.body : null;
    },
    { what: `${path} to settle` },
  ) as Promise<{ state: string; counts: Record<string, number> }>;
const reconcile = async (dryRun: boolean) => {
  const res = await h.admin().post("/sources/hr/reconcile", { dryRun });
  expect(res.status).toBe(202);
  return settle(`/reconcile-runs/${res.body.runId}`);
};
let n = 0;
const uniq = (stem: string) => `${stem}.i${++n}@example.com`;

/** Syncs the user again (a resync re-reads the platform) and expects zero write calls. */
async function expectNoWritesOnResync(id: string) {
  await h.waitForIdle();
  const before = writes();
  expect((await h.admin().post("/sources/hr/resync", { users: [id] })).status).toBe(202);
  await h.waitForIdle();
  expect(writes(), "write calls of a resync of converged state").toBe(before);
}

async function expectClean() {
  const status = await h.admin().get("/status");
  expect(status.body.deadLetters, JSON.stringify(status.body)).toBe(0);
  expect(h.emulator.violations()).toEqual([]);
}

describe("values as identity providers send them", () => {
  it("numbers as strings, booleans as strings, scalars for arrays, arrays for scalars, non-ASCII", async () => {
    const userName = uniq("typed");
    const u = await h.scim("hr").createUser(userName, {
      schemas: [USER_SCHEMA, ENT],
      title: "True",
      nickName: " 7 ",
      locale: "Zürich 日本 🎉",
      emails: [
        { value: `home.${userName}`, type: "home" },
        { value: userName, type: "work", primary: true },
      ],
      [ENT]: { employeeNumber: "42", costCenter: "0042", department: "Ünïcødé", division: "Retail" },
    });
    await h.waitForIdle();
    expect(values(userName)).toEqual({
      empNo: 42,
      cost: "0042",
      dept: "Ünïcødé",
      depts: ["Retail"],
      workMail: userName,
      homeMail: `home.${userName}`,
      allMail: [`home.${userName}`, userName],
      contractor: true,
      levels: [7],
      locale: "Zürich 日本 🎉",
    });
    await expectNoWritesOnResync(u.id);

    await h.scim("hr").patchUser(u.id, [
      { op: "Replace", path: `${ENT}:employeeNumber`, value: "4.5e1" },
      { op: "Replace", path: "title", value: "false" },
    ]);
    await h.waitForIdle();
    expect(values(userName)).toMatchObject({ empNo: 45, contractor: false });
    await expectNoWritesOnResync(u.id);
    await expectClean();
  });

  it("a value emptied, removed or nulled at the source is removed on the platform, not left stale", async () => {
    const userName = uniq("gone");
    const u = await h.scim("hr").createUser(userName, {
      schemas: [USER_SCHEMA, ENT],
      title: "1",
      nickName: "3",
      locale: "de-CH",
      emails: [{ value: userName, type: "work", primary: true }],
      [ENT]: { employeeNumber: "7", costCenter: "CC-1", department: "Ops", division: "A" },
    });
    await h.waitForIdle();
    expect(values(userName)).toMatchObject({ empNo: 7, cost: "CC-1", dept: "Ops", contractor: true });

    const res = await h.scim("hr").patchUser(u.id, [
      { op: "replace", path: `${ENT}:department`, value: "" },
      { op: "remove", path: `${ENT}:costCenter` },
      { op: "replace", path: `${ENT}:employeeNumber`, value: null },
      { op: "remove", path: "title" },
      { op: "remove", path: "nickName" },
      { op: "replace", path: "locale", value: "" },
      { op: "remove", path: `${ENT}:division` },
      { op: "remove", path: 'emails[type eq "work"]' },
    ]);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    await h.waitForIdle();
    expect(values(userName)).toEqual({});
    await expectNoWritesOnResync(u.id);
    await expectClean();
  });

  it("a PUT without the extension (Okta replaces the whole user) removes its values", async () => {
    const userName = uniq("put");
    const u = await h.scim("hr").createUser(userName, {
      schemas: [USER_SCHEMA, ENT],
      title: "yes",
      [ENT]: { employeeNumber: "9", department: "Legal" },
    });
    await h.waitForIdle();
    expect(values(userName)).toMatchObject({ empNo: 9, dept: "Legal", contractor: true });
    const res = await h.scim("hr").put(`/Users/${u.id}`, { schemas: [USER_SCHEMA], userName, active: true });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    await h.waitForIdle();
    expect(values(userName)).toEqual({});
    await expectNoWritesOnResync(u.id);
    await expectClean();
  });

  it("core attributes named with their schema URN (RFC 7644 §3.10) are read like the short paths", async () => {
    const userName = uniq("urn");
    const u = await h.scim("hr").createUser(userName, {
      name: { givenName: "Ada", familyName: "Łukasiewicz" },
      emails: [
        { value: userName, type: "work", primary: true },
        { value: `home.${userName}`, type: "home" },
      ],
    });
    await h.waitForIdle();
    expect(values(userName)).toMatchObject({ family: "Łukasiewicz", homeMail: `home.${userName}` });
    await h.scim("hr").patchUser(u.id, [{ op: "remove", path: "name.familyName" }]);
    await h.waitForIdle();
    expect(values(userName)["family"]).toBeUndefined();
    await expectNoWritesOnResync(u.id);
    await expectClean();
  });

  it("a very long string lands whole", async () => {
    const userName = uniq("long");
    const long = "ä".repeat(5_000);
    const u = await h
      .scim("hr")
      .createUser(userName, { schemas: [USER_SCHEMA, ENT], [ENT]: { department: long } });
    await h.waitForIdle();
    expect(values(userName)["dept"]).toBe(long);
    await expectNoWritesOnResync(u.id);
    await expectClean();
  });

  it("the manager's value is the manager's platform id (Entra's bare-string manager too)", async () => {
    const boss = await h.scim("hr").createUser(uniq("boss"));
    const emp = uniq("emp");
    const u = await h
      .scim("hr")
      .createUser(emp, { schemas: [USER_SCHEMA, ENT], [ENT]: { manager: { value: boss.id } } });
    await h.waitForIdle();
    expect(values(emp)["boss"]).toBe(pid(boss.userName));
    const boss2 = await h.scim("hr").createUser(uniq("boss2"));
    // Entra ID: the manager as a bare id string, op capitalised.
    await h.scim("hr").patchUser(u.id, [{ op: "Replace", path: `${ENT}:manager`, value: boss2.id }]);
    await h.waitForIdle();
    expect(values(emp)["boss"]).toBe(pid(boss2.userName));
    await h.scim("hr").patchUser(u.id, [{ op: "Replace", path: `${ENT}:manager`, value: "" }]);
    await h.waitForIdle();
    expect(values(emp)["boss"]).toBeUndefined();
    await expectNoWritesOnResync(u.id);
    await expectClean();
  });

  it("a value that cannot be coerced any more does not leave the old value on the platform", async () => {
    const userName = uniq("bad");
    const u = await h
      .scim("hr")
      .createUser(userName, { schemas: [USER_SCHEMA, ENT], [ENT]: { employeeNumber: "12" } });
    await h.waitForIdle();
    expect(values(userName)["empNo"]).toBe(12);
    await h.scim("hr").patchUser(u.id, [{ op: "replace", path: `${ENT}:employeeNumber`, value: "E-12" }]);
    await h.waitForIdle();
    expect(values(userName)["empNo"]).toBeUndefined();
    await expectNoWritesOnResync(u.id);
    // Synced, the problem named on the entity (and in a warn line).
    expect(await entity(u.id)).toMatchObject({
      state: "synced",
      lastError: { code: "attribute_value_invalid" },
    });
  });

  it("a code that JavaScript reads as a hexadecimal number is no number", async () => {
    const userName = uniq("hex");
    const u = await h.scim("hr").createUser(userName, {
      schemas: [USER_SCHEMA, ENT],
      nickName: "0b11",
      [ENT]: { employeeNumber: "0x1A" },
    });
    await h.waitForIdle();
    expect(values(userName)["empNo"]).toBeUndefined();
    expect(values(userName)["levels"]).toBeUndefined();
    expect(await entity(u.id)).toMatchObject({
      state: "synced",
      lastError: { code: "attribute_value_invalid" },
    });
  });
});

describe("drift and config changes", () => {
  it("reconciliation counts attributeValues drift and repairs it; then finds none", async () => {
    const userName = uniq("drift");
    await h.scim("hr").createUser(userName, { schemas: [USER_SCHEMA, ENT], [ENT]: { department: "Sales" } });
    await h.waitForIdle();
    const def = h.emulator.data.attributes.list().find((d) => d.name === "dept");
    expect(
      h.emulator.drift({
        action: "setAttributeValue",
        userId: pid(userName),
        attributeId: def!.id,
        value: "Hacked",
      }),
    );
    const dry = await reconcile(true);
    expect(dry).toMatchObject({ state: "succeeded", counts: { attributeValues: 1 } });
    expect(values(userName)["dept"]).toBe("Hacked");
    const real = await reconcile(false);
    expect(real).toMatchObject({ state: "succeeded", counts: { attributeValues: 1 } });
    await h.waitForIdle();
    expect(values(userName)["dept"]).toBe("Sales");
    expect((await reconcile(true)).counts).toMatchObject({ attributeValues: 0, changed: 0, missing: 0 });
  });

  it("a definition deleted and a value removed behind the bridge's back: counted by reconciliation, put back", async () => {
    const userName = uniq("behind");
    const other = uniq("behind.other");
    await h.scim("hr").createUser(userName, {
      schemas: [USER_SCHEMA, ENT],
      [ENT]: { costCenter: "CC-9", employeeNumber: "5" },
    });
    await h.scim("hr").createUser(other, { schemas: [USER_SCHEMA, ENT], [ENT]: { employeeNumber: "6" } });
    await h.waitForIdle();
    const defs = h.emulator.data.attributes.definitions;
    const cost = [...defs.values()].find((d) => d.name === "cost")!;
    defs.delete(cost.id);
    for (const own of h.emulator.data.attributes.values.values()) own.delete(cost.id);
    const empNo = [...defs.values()].find((d) => d.name === "empNo")!;
    h.emulator.data.attributes.values.get(pid(other))?.delete(empNo.id);
    const dry = await reconcile(true);
    expect(dry.counts.attributeValues).toBeGreaterThanOrEqual(2);
    await reconcile(false);
    await h.waitForIdle();
    expect(values(userName)).toMatchObject({ cost: "CC-9", empNo: 5 });
    expect(values(other)).toMatchObject({ empNo: 6 });
    expect([...defs.values()].find((d) => d.name === "cost")?.type).toBe("string");
    expect((await reconcile(true)).counts).toMatchObject({ attributeValues: 0 });
    await expectClean();
  });

  it("a rule's source path changed in config between runs: a reconciliation counts it, a resync moves the value", async () => {
    const userName = uniq("path");
    const u = await h.scim("hr").createUser(userName, {
      schemas: [USER_SCHEMA, ENT],
      [ENT]: { department: "Sales", organization: "Initech" },
    });
    await h.waitForIdle();
    expect(values(userName)["dept"]).toBe("Sales");
    await h.stop();
    // The same deployment restarted with the rule reading another path.
    const raw = structuredClone(h.config) as unknown as {
      sources: { hr: { attributes: Record<string, { from: string }> } };
    };
    raw.sources.hr.attributes["dept"]!.from = `${ENT}:organization`;
    const changed = await startBridge(buildConfig(raw), { role: "all", logger: createLogger("silent") });
    try {
      const admin = supertest(changed.url!);
      const auth = { Authorization: `Bearer ${E2E_ADMIN_TOKEN}` };
      const idle = () =>
        waitFor(
          async () =>
            (await changed.isIdle()) &&
            (await new Promise((r) => setTimeout(r, 30))) === undefined &&
            (await changed.isIdle()),
          {
            what: "idle",
          },
        );
      const dry = await admin.post("/admin/v1/sources/hr/reconcile").set(auth).send({ dryRun: true });
      const run = await waitFor(
        async () => {
          const body = (await admin.get(`/admin/v1/reconcile-runs/${dry.body.runId}`).set(auth)).body;
          return SETTLED.includes(body.state) ? body : null;
        },
        { what: "the run" },
      );
      // Every user with a department or an organization differs now (the other probes' users too).
      expect(run.counts.attributeValues).toBeGreaterThanOrEqual(1);
      expect(
        (
          await admin
            .post("/admin/v1/sources/hr/resync")
            .set(auth)
            .send({ users: [u.id] })
        ).status,
      ).toBe(202);
      await idle();
      expect(values(userName)["dept"]).toBe("Initech");
      const before = writes();
      expect(
        (
          await admin
            .post("/admin/v1/sources/hr/resync")
            .set(auth)
            .send({ users: [u.id] })
        ).status,
      ).toBe(202);
      await idle();
      expect(writes()).toBe(before);
    } finally {
      await changed.close();
      await h.start();
    }
  });
});

describe("definitions under load", () => {
  it("thirty users pushed at once, each rule's definition missing: one definition each, every value lands", async () => {
    const before = new Set(h.emulator.data.attributes.list().map((d) => d.id));
    // Last: the definitions the other probes created (and cached) are deleted behind the bridge's
    // back, so every sync meets a missing definition, or a cached one that is gone, at once.
    for (const id of before) h.emulator.data.attributes.definitions.delete(id);
    const names = Array.from({ length: 30 }, (_, i) => uniq(`burst${i}`));
    await Promise.all(
      names.map((userName, i) =>
        h.scim("hr").createUser(userName, {
          schemas: [USER_SCHEMA, ENT],
          title: i % 2 ? "true" : "false",
          [ENT]: { employeeNumber: String(i), department: `D${i}` },
        }),
      ),
    );
    await h.waitForIdle();
    const defs = h.emulator.data.attributes.list();
    for (const name of ["empNo", "dept", "contractor"])
      expect(defs.filter((d) => d.name === name)).toHaveLength(1);
    for (const [i, userName] of names.entries()) {
      expect(values(userName)).toMatchObject({ empNo: i, dept: `D${i}`, contractor: i % 2 === 1 });
    }
    await expectClean();
  });
});
