import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type HooksTestApp, createHooksTestApp } from "./hooks-test-app.js";

/**
 * `user.upserted` replaces a user like a SCIM PUT, and like the bridge's PUT (RFC 7644 §3.5.1: an
 * omitted attribute is not asserted) it leaves `active` as it is when the data has none.
 */
let t: HooksTestApp;
let n = 0;
const unique = (s: string) => `${s}-${++n}-${Date.now().toString(36)}`;
const mail = (s: string) => `${unique(s)}@example.com`;

beforeAll(async () => {
  t = await createHooksTestApp("hooks-events-active");
});
afterAll(async () => {
  await t.close();
});

describe("user.upserted without active", () => {
  it("keeps a deactivated user deactivated (a profile update never reactivates a leaver)", async () => {
    const name = mail("leaver");
    await t.postEvents({ type: "user.upserted", data: { userName: name, active: false } });
    const res = await t.postEvents({
      type: "user.upserted",
      data: { userName: name, displayName: "Still Gone" },
    });
    expect(res.status).toBe(200);
    expect((await t.user({ userName: name }))?.resource).toMatchObject({
      displayName: "Still Gone",
      active: false,
    });
    // Said explicitly, it reactivates; a new user without it is active.
    await t.postEvents({ type: "user.upserted", data: { userName: name, active: true } });
    expect((await t.user({ userName: name }))?.resource.active).toBe(true);
    const fresh = mail("fresh");
    await t.postEvents({ type: "user.upserted", data: { userName: fresh } });
    expect((await t.user({ userName: fresh }))?.resource.active).toBe(true);
  });

  it("reads active in any case of its name, as a SCIM write does", async () => {
    const name = mail("cased");
    await t.postEvents({ type: "user.upserted", data: { userName: name } });
    const off = await t.postEvents({ type: "user.upserted", data: { userName: name, Active: false } });
    expect(off.body).toEqual({ status: "applied", events: 1, changed: 1 });
    expect((await t.user({ userName: name }))?.resource.active).toBe(false);
    await t.postEvents({ type: "user.upserted", data: { userName: name, ACTIVE: "True" } });
    expect((await t.user({ userName: name }))?.resource.active).toBe(true);
  });

  it("counts an unchanged profile of a deactivated user as no change", async () => {
    const name = mail("idle");
    await t.postEvents({
      type: "user.upserted",
      data: { userName: name, displayName: "Idle", active: false },
    });
    const before = t.notified.length;
    const res = await t.postEvents({ type: "user.upserted", data: { userName: name, displayName: "Idle" } });
    expect(res.body).toEqual({ status: "applied", events: 1, changed: 0 });
    expect(t.notified.length).toBe(before);
  });
});

describe("group.upserted without members", () => {
  // The same rule for a group's member list: absent, it is not asserted (a rename-only upsert must
  // not take everyone out of the group); `[]` says "no members" and empties it.
  it("keeps the members; [] empties them; a new group without members has none", async () => {
    const ada = mail("ada");
    const bob = mail("bob");
    const group = unique("Finance");
    const renamed = unique("Finance Renamed");
    const ext = unique("hr-team");
    const members = async () =>
      ((await t.group({ externalId: ext }))?.members ?? []).map((m) => m.value).sort();
    await t.postEvents({
      events: [
        { type: "user.upserted", data: { userName: ada } },
        { type: "user.upserted", data: { userName: bob } },
        {
          type: "group.upserted",
          data: { externalId: ext, displayName: group, members: [{ userName: ada }, { userName: bob }] },
        },
      ],
    });
    const both = [
      (await t.user({ userName: ada }))!.resource.id,
      (await t.user({ userName: bob }))!.resource.id,
    ].sort();
    expect(await members()).toEqual(both);

    const rename = await t.postEvents({
      type: "group.upserted",
      data: { externalId: ext, displayName: renamed },
    });
    expect(rename.body).toEqual({ status: "applied", events: 1, changed: 1 });
    expect((await t.group({ externalId: ext }))?.resource.displayName).toBe(renamed);
    expect(await members()).toEqual(both);

    const before = t.notified.length;
    const same = await t.postEvents({
      type: "group.upserted",
      data: { externalId: ext, displayName: renamed, members: null },
    });
    expect(same.body).toEqual({ status: "applied", events: 1, changed: 0 });
    expect(t.notified.length).toBe(before);
    expect(await members()).toEqual(both);

    await t.postEvents({
      type: "group.upserted",
      data: { externalId: ext, displayName: renamed, members: [] },
    });
    expect(await members()).toEqual([]);

    const lone = unique("hr-lone");
    await t.postEvents({ type: "group.upserted", data: { externalId: lone, displayName: unique("Lone") } });
    expect((await t.group({ externalId: lone }))?.members ?? []).toEqual([]);
  });
});
