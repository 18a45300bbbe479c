import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type HooksTestApp, createHooksTestApp } from "./hooks-test-app.js";

/**
 * Signed change events (docs/webhooks.md): the whole delivery is validated before anything is
 * stored, and a later event is judged by the directory as the earlier events of the same delivery
 * leave it (names they free or take, users they delete), so a delivery is applied all or nothing.
 */
let t: HooksTestApp;
let n = 0;
const unique = (s: string) => `${s}-${++n}-${Date.now().toString(36)}`;
const mail = (s: string) => `${unique(s)}@example.com`;

beforeAll(async () => {
  t = await createHooksTestApp("hooks-events-view");
});
afterAll(async () => {
  await t.close();
});

describe("a delivery is validated against what its own earlier events do (all or nothing)", () => {
  it("refuses a rename into a userName that a new user of the same delivery takes first", async () => {
    const ext = unique("e");
    const old = mail("old");
    await t.postEvents({ type: "user.upserted", data: { userName: old, externalId: ext } });
    const taken = mail("taken");
    const newcomer = unique("n");
    const res = await t.postEvents({
      events: [
        { type: "user.upserted", data: { userName: taken, externalId: newcomer } },
        { type: "user.upserted", data: { userName: taken, externalId: ext } },
      ],
    });
    expect(res.status).toBe(400);
    expect(res.body.error.items).toEqual([
      { index: 1, message: "userName is already taken by another user" },
    ]);
    expect(await t.user({ externalId: newcomer })).toBeNull();
    expect((await t.user({ externalId: ext }))?.resource.userName).toBe(old);
  });

  it("refuses two new users of one delivery with the same userName instead of merging them", async () => {
    const name = mail("twin");
    const [a, b] = [unique("a"), unique("b")];
    const res = await t.postEvents({
      events: [
        { type: "user.upserted", data: { userName: name, externalId: a, displayName: "A" } },
        { type: "user.upserted", data: { userName: name, externalId: b, displayName: "B" } },
      ],
    });
    expect(res.status).toBe(400);
    expect(res.body.error.items).toEqual([
      { index: 1, message: "userName is already taken by another user" },
    ]);
    expect(await t.user({ userName: name })).toBeNull();
  });

  it("refuses an upsert matched only by the userName of a user that has another externalId", async () => {
    const name = mail("held");
    const holder = unique("holder");
    await t.postEvents({ type: "user.upserted", data: { userName: name, externalId: holder } });
    const stranger = unique("stranger");
    const res = await t.postEvents({
      type: "user.upserted",
      data: { userName: name, externalId: stranger, displayName: "Someone else" },
    });
    expect(res.status).toBe(400);
    expect(res.body.error.items).toEqual([
      { index: 0, message: "userName is already taken by another user" },
    ]);
    expect((await t.user({ userName: name }))?.resource).toMatchObject({ externalId: holder });
    expect(await t.user({ externalId: stranger })).toBeNull();
  });

  it("refuses a group rename into a displayName that a new group of the same delivery takes first", async () => {
    const ext = unique("ge");
    const old = unique("Old Team");
    await t.postEvents({ type: "group.upserted", data: { displayName: old, externalId: ext } });
    const taken = unique("Taken Team");
    const newcomer = unique("gn");
    const res = await t.postEvents({
      events: [
        { type: "group.upserted", data: { displayName: taken, externalId: newcomer } },
        { type: "group.upserted", data: { displayName: taken, externalId: ext } },
      ],
    });
    expect(res.status).toBe(400);
    expect(res.body.error.items).toEqual([
      { index: 1, message: "displayName is already taken by another group" },
    ]);
    expect(await t.group({ externalId: newcomer })).toBeNull();
    expect((await t.group({ externalId: ext }))?.resource.displayName).toBe(old);
  });

  it("refuses members named by a user that an earlier event deletes or renames, and stores nothing", async () => {
    const gone = mail("gone");
    const renamedExt = unique("r");
    const renamed = mail("renamed");
    await t.postEvents({
      events: [
        { type: "user.upserted", data: { userName: gone } },
        { type: "user.upserted", data: { userName: renamed, externalId: renamedExt } },
      ],
    });
    const team = unique("Team");
    const res = await t.postEvents({
      events: [
        { type: "user.deleted", data: { userName: gone } },
        { type: "user.upserted", data: { userName: `new.${renamed}`, externalId: renamedExt } },
        {
          type: "group.upserted",
          data: { displayName: team, members: [{ userName: gone }, { userName: renamed }] },
        },
      ],
    });
    expect(res.status).toBe(400);
    expect(res.body.error.items).toEqual([
      { index: 2, message: "members[0] names no known user" },
      { index: 2, message: "members[1] names no known user" },
    ]);
    expect(await t.user({ userName: gone })).not.toBeNull();
    expect((await t.user({ externalId: renamedExt }))?.resource.userName).toBe(renamed);
    expect(await t.group({ displayName: team })).toBeNull();
  });

  it("applies a delivery whose later events rely on names its earlier events free or create", async () => {
    const ext = unique("e");
    const first = mail("first");
    await t.postEvents({ type: "user.upserted", data: { userName: first, externalId: ext } });
    const team = unique("Team");
    const hire = unique("hire");
    const res = await t.postEvents({
      events: [
        // The rename frees `first`, which a new hire then takes; the group names both.
        { type: "user.upserted", data: { userName: `moved.${first}`, externalId: ext } },
        { type: "user.upserted", data: { userName: first, externalId: hire } },
        {
          type: "group.upserted",
          data: { displayName: team, members: [{ userName: `moved.${first}` }, { externalId: hire }] },
        },
      ],
    });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: "applied", events: 3, changed: 3 });
    const moved = await t.user({ externalId: ext });
    const hired = await t.user({ externalId: hire });
    expect(moved?.resource.userName).toBe(`moved.${first}`);
    expect(hired?.resource.userName).toBe(first);
    expect((await t.group({ displayName: team }))?.members?.map((m) => m.value).sort()).toEqual(
      [moved!.resource.id, hired!.resource.id].sort(),
    );
  });
});
