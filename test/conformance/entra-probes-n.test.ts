/**
 * Probes (round n) of the SCIM intake as Microsoft Entra ID's provisioning service writes PATCHes
 * (intake only, real Redis), for forms earlier rounds did not pin (see idp-probes-a/d/e/g/i/j/k/l
 * and test/integration/scim/idp-probes.test.ts for the rest):
 * - `op: "Add"` of `emails[type eq "work"].value` on a user who already has a work email: Entra
 *   sends Add, not Replace, when the mapped source attribute changes. RFC 7644 §3.5.2.1: an add
 *   whose target is a single-valued (sub-)attribute replaces its value; the user keeps one work
 *   email, with its type and primary flag, and the look-up by address follows;
 * - the enterprise `manager` cleared with `{"value": ""}` (the complex form, beside the bare `""`
 *   pinned in idp-probes-g), by path with Replace or Add, without path, and in a PUT; on a user
 *   who has no manager it changes nothing (no empty extension object, the version stays).
 */
import { describe, expect, it } from "vitest";
import { scimSourceSuite } from "../helpers/scim-test-app.js";

const USER = "urn:ietf:params:scim:schemas:core:2.0:User";
const ENT = "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User";
const PATCH = "urn:ietf:params:scim:api:messages:2.0:PatchOp";

let n = 0;
const unique = (stem: string) => `${stem}.n${++n}@example.com`;

const suite = scimSourceSuite("conformance-entra-probes-n", "entra");
const { send, ids: idsFor } = suite;

type User = { id: string; userName: string; meta: { version: string } } & Record<string, unknown>;

const patch = (id: string, Operations: unknown[]) =>
  send("patch", `/Users/${id}`, { schemas: [PATCH], Operations });
const createUser = (body: Record<string, unknown>) =>
  suite.created<User>("/Users", { schemas: [USER, ENT], ...body });
const stored = (id: string) => suite.stored<User>(id);

describe('Entra\'s `op: "Add"` of `emails[type eq "work"].value`', () => {
  it("on a user with a work email replaces its address: one work email, type and primary kept, look-ups follow", async () => {
    const old = unique("ada.old");
    const user = await createUser({
      userName: unique("ada"),
      emails: [
        { value: old, type: "work", primary: true },
        { value: unique("ada.home"), type: "home" },
      ],
    });
    const home = (user.emails as Array<{ value: string }>)[1]!.value;
    const next = unique("ada.new");
    const res = await patch(user.id, [{ op: "Add", path: 'emails[type eq "work"].value', value: next }]);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const emails = (await stored(user.id)).emails as Array<Record<string, unknown>>;
    expect(emails).toHaveLength(2);
    expect(emails).toEqual(
      expect.arrayContaining([
        { value: next, type: "work", primary: true },
        { value: home, type: "home" },
      ]),
    );
    expect(await idsFor(`emails eq "${next}"`)).toEqual([user.id]);
    expect(await idsFor(`emails eq "${old}"`)).toEqual([]);
  });

  it("on a user with only a home email adds the work email beside it", async () => {
    const home = unique("bo.home");
    const user = await createUser({ userName: unique("bo"), emails: [{ value: home, type: "home" }] });
    const work = unique("bo.work");
    const res = await patch(user.id, [
      { op: "Add", path: 'emails[type eq "work"].value', value: work },
      { op: "Add", path: 'emails[type eq "work"].primary', value: "True" },
    ]);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const emails = (await stored(user.id)).emails as Array<Record<string, unknown>>;
    expect(emails).toHaveLength(2);
    expect(emails).toEqual(
      expect.arrayContaining([
        { value: home, type: "home" },
        { value: work, type: "work", primary: true },
      ]),
    );
  });
});

describe('the enterprise manager cleared with `{"value": ""}`', () => {
  const clears: Array<[string, (id: string) => Promise<{ status: number }>]> = [
    ["Replace by path", (id) => patch(id, [{ op: "Replace", path: `${ENT}:manager`, value: { value: "" } }])],
    ["Add by path", (id) => patch(id, [{ op: "Add", path: `${ENT}:manager`, value: { value: "" } }])],
    [
      "Replace without path (URN-prefixed key)",
      (id) => patch(id, [{ op: "Replace", value: { [`${ENT}:manager`]: { value: "" } } }]),
    ],
    [
      "Replace without path (extension object)",
      (id) => patch(id, [{ op: "Replace", value: { [ENT]: { manager: { value: "" } } } }]),
    ],
  ];

  for (const [how, clear] of clears) {
    it(`${how}: the manager is gone, the department stays`, async () => {
      const boss = await createUser({ userName: unique("boss") });
      const user = await createUser({
        userName: unique("report"),
        [ENT]: { manager: { value: boss.id }, department: "Sales" },
      });
      const res = await clear(user.id);
      expect(res.status, JSON.stringify((res as { body?: unknown }).body)).toBe(200);
      const after = await stored(user.id);
      expect(after[ENT]).toEqual({ department: "Sales" });
      expect(await idsFor(`${ENT}:manager.value eq "${boss.id}"`)).toEqual([]);
    });
  }

  it('a PUT whose extension holds `manager: {value: ""}` replaces the user without a manager', async () => {
    const user = await createUser({ userName: unique("put"), [ENT]: { manager: { value: "m-1" } } });
    const res = await send("put", `/Users/${user.id}`, {
      schemas: [USER, ENT],
      userName: user.userName,
      [ENT]: { manager: { value: "" }, costCenter: "CC-7" },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect((await stored(user.id))[ENT]).toEqual({ costCenter: "CC-7" });
  });

  it("on a user without a manager changes nothing: no empty extension, the version stays", async () => {
    const user = await createUser({ userName: unique("none") });
    for (const [, clear] of clears) {
      const res = await clear(user.id);
      expect(res.status).toBe(200);
    }
    const after = await stored(user.id);
    expect(after).not.toHaveProperty(ENT);
    expect(after.schemas).toEqual([USER]);
    expect(after.meta.version).toBe(user.meta.version);
  });
});
