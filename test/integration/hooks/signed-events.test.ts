import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { signWebhook } from "../../../src/hooks/standard-webhooks.js";
import { type HooksTestApp, EVENTS_SECRET, createHooksTestApp } from "./hooks-test-app.js";

let t: HooksTestApp;
const fixture = (name: string) =>
  JSON.parse(readFileSync(new URL(`../../fixtures/hooks/${name}.json`, import.meta.url), "utf8"));
const USER = "urn:ietf:params:scim:schemas:core:2.0:User";
const GROUP = "urn:ietf:params:scim:schemas:core:2.0:Group";
let n = 0;
const unique = (s: string) => `${s}-${++n}-${Date.now().toString(36)}`;

beforeAll(async () => {
  t = await createHooksTestApp("hooks-events");
});
afterAll(async () => {
  await t.close();
});

describe("signed change events", () => {
  it("applies a batch: users upserted, a group with members named by externalId and userName, a ping", async () => {
    const res = await t.postEvents(fixture("events-batch"));
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: "applied", events: 4, changed: 3 });
    const kim = await t.user({ externalId: "hr-1001" });
    const ravi = await t.user({ userName: "ravi.patel@example.com" });
    expect(kim?.resource).toMatchObject({
      userName: "kim.lee@example.com",
      displayName: "Kim Lee",
      active: true,
    });
    expect(ravi?.resource["urn:ietf:params:scim:schemas:extension:enterprise:2.0:User"]).toEqual({
      department: "Finance",
    });
    const group = await t.group({ externalId: "hr-team-7" });
    expect(group?.members?.map((m) => m.value).sort()).toEqual([kim!.resource.id, ravi!.resource.id].sort());
    expect(t.notified).toContainEqual({ source: "okta", kind: "group", id: group!.resource.id });
  });

  it("matches upserts by externalId, then userName; sets membership to exactly the list; deletes", async () => {
    const ext = unique("ext");
    const name = `${unique("ann")}@example.com`;
    await t.postEvents({ type: "user.upserted", data: { schemas: [USER], userName: name, active: true } });
    // Matched by userName, given an externalId; then matched by externalId and renamed.
    await t.postEvents({
      type: "user.upserted",
      data: { userName: name, externalId: ext, displayName: "Ann" },
    });
    await t.postEvents({
      type: "user.upserted",
      data: { userName: `new.${name}`, externalId: ext, active: false },
    });
    const ann = await t.user({ externalId: ext });
    expect(ann?.resource).toMatchObject({ userName: `new.${name}`, active: false });
    expect(await t.user({ userName: name })).toBeNull();

    const other = `${unique("bo")}@example.com`;
    const gName = unique("Team");
    await t.postEvents({
      events: [
        { type: "user.upserted", data: { userName: other } },
        {
          type: "group.upserted",
          data: { schemas: [GROUP], displayName: gName, members: [{ externalId: ext }, { userName: other }] },
        },
      ],
    });
    expect((await t.group({ displayName: gName }))?.memberCount).toBe(2);
    await t.postEvents({
      type: "group.upserted",
      data: { displayName: gName, members: [{ userName: other }] },
    });
    const bo = await t.user({ userName: other });
    expect((await t.group({ displayName: gName }))?.members?.map((m) => m.value)).toEqual([bo!.resource.id]);

    const del = await t.postEvents({
      events: [
        { type: "user.deleted", data: { externalId: ext } },
        { type: "group.deleted", data: { displayName: gName } },
        { type: "user.deleted", data: { userName: "nobody@example.com" } },
      ],
    });
    expect(del.body).toMatchObject({ status: "applied", changed: 2 });
    expect(await t.user({ externalId: ext })).toBeNull();
    expect(await t.group({ displayName: gName })).toBeNull();
  });

  it("changes nothing for a ping or an upsert equal to the stored user", async () => {
    const name = `${unique("same")}@example.com`;
    await t.postEvents({ type: "user.upserted", data: { userName: name, displayName: "Same" } });
    const before = t.notified.length;
    const res = await t.postEvents({
      events: [{ type: "ping" }, { type: "user.upserted", data: { userName: name, displayName: "Same" } }],
    });
    expect(res.body).toEqual({ status: "applied", events: 2, changed: 0 });
    expect(t.notified.length).toBe(before);
  });

  it("reports every bad item by index and stores nothing of the delivery", async () => {
    const res = await t.postEvents(fixture("events-invalid"));
    expect(res.status).toBe(400);
    expect(res.body.error.items.map((i: { index: number }) => i.index)).toEqual([1, 2, 3]);
    expect(res.body.error.items[1].message).toMatch(/members\[0\] names no known user/);
    expect(await t.user({ externalId: "hr-2001" })).toBeNull();
  });

  it("refuses an upsert that would take another user's userName", async () => {
    const a = `${unique("a")}@example.com`;
    await t.postEvents({ events: [{ type: "user.upserted", data: { userName: a, externalId: `x-${a}` } }] });
    await t.postEvents({
      events: [{ type: "user.upserted", data: { userName: `b${a}`, externalId: `y-${a}` } }],
    });
    const res = await t.postEvents({
      events: [{ type: "ping" }, { type: "user.upserted", data: { userName: a, externalId: `y-${a}` } }],
    });
    expect(res.status).toBe(400);
    expect(res.body.error.items).toEqual([
      { index: 1, message: "userName is already taken by another user" },
    ]);
  });

  it("a deletion whose externalId is unknown does not take another person who holds the userName", async () => {
    // hr-1 holds the login; the deletion names hr-2 (gone already) with that login: someone else.
    const login = `${unique("shared-login")}@example.com`;
    const team = unique("Kept");
    await t.postEvents({
      events: [
        { type: "user.upserted", data: { userName: login, externalId: `hr-1-${login}` } },
        { type: "group.upserted", data: { displayName: team, externalId: `g-1-${team}` } },
      ],
    });
    const res = await t.postEvents({
      events: [
        { type: "user.deleted", data: { externalId: `hr-2-${login}`, userName: login } },
        { type: "group.deleted", data: { externalId: `g-2-${team}`, displayName: team } },
      ],
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: "applied", changed: 0 });
    expect(await t.user({ userName: login })).not.toBeNull();
    expect(await t.group({ displayName: team })).not.toBeNull();
    // Named by the login alone, or with its own externalId, the deletion takes the user.
    const own = await t.postEvents({
      type: "user.deleted",
      data: { externalId: `hr-1-${login}`, userName: login },
    });
    expect(own.body).toMatchObject({ changed: 1 });
    expect(await t.user({ userName: login })).toBeNull();
  });

  it("answers a replayed webhook-id 2xx without applying it again", async () => {
    const name = `${unique("replay")}@example.com`;
    const body = { type: "user.upserted", data: { userName: name } };
    const first = await t.postEvents(body, { id: `msg_${name}` });
    expect(first.body.status).toBe("applied");
    const user = await t.user({ userName: name });
    await t.directory.deleteUser("okta", user!.resource.id);
    // A sender's retry is signed again with a new timestamp, under the same id.
    const replay = await t.postEvents(body, {
      id: `msg_${name}`,
      timestamp: Math.floor(Date.now() / 1000) + 5,
    });
    expect(replay.status).toBe(200);
    expect(replay.body.status).toBe("duplicate");
    expect(await t.user({ userName: name })).toBeNull();
  });

  it("refuses a forged signature, a wrong secret, missing headers and an expired timestamp", async () => {
    const name = `${unique("forged")}@example.com`;
    const body = { type: "user.upserted", data: { userName: name } };
    const other = `whsec_${Buffer.from("not the configured key at all!!").toString("base64")}`;
    const forged = await t.postEvents(body, { secret: other });
    expect(forged.status).toBe(401);
    expect(forged.body.error.code).toBe("unauthorized");
    const tampered = await t
      .postEvents(body, { raw: JSON.stringify(body) })
      .set("webhook-signature", "v1,AAAA");
    expect(tampered.status).toBe(401);
    const unsigned = await t.request.post("/hooks/okta/events").send(body);
    expect(unsigned.status).toBe(401);
    const expired = await t.postEvents(body, { timestamp: Math.floor(Date.now() / 1000) - 600 });
    expect(expired.status).toBe(401);
    expect(expired.body.error.code).toBe("timestamp_out_of_tolerance");
    expect(await t.user({ userName: name })).toBeNull();
  });

  it("refuses an oversize body with 413", async () => {
    const res = await t.postEvents({ type: "ping", data: { padding: "x".repeat(70 * 1024) } });
    expect(res.status).toBe(413);
    expect(res.body.error.code).toBe("payload_too_large");
  });

  it("accepts a delivery signed with the openssl one-liner of docs/webhooks.md", async () => {
    const name = `${unique("openssl")}@example.com`;
    const body = JSON.stringify({ type: "user.upserted", data: { userName: name } });
    const id = `msg_${unique("sh")}`;
    const ts = String(Math.floor(Date.now() / 1000));
    const signature = execFileSync(
      "bash",
      [
        "-c",
        `printf '%s' "$ID.$TS.$BODY" | openssl dgst -sha256 -mac HMAC -macopt "hexkey:$(printf '%s' "\${SECRET#whsec_}" | base64 -d | xxd -p -c 256)" -binary | base64`,
      ],
      { env: { ...process.env, ID: id, TS: ts, BODY: body, SECRET: EVENTS_SECRET }, encoding: "utf8" },
    ).trim();
    const res = await t.request
      .post("/hooks/okta/events")
      .set("Content-Type", "application/json")
      .set("webhook-id", id)
      .set("webhook-timestamp", ts)
      .set("webhook-signature", `v1,${signature}`)
      .send(body);
    expect(res.status).toBe(200);
    expect(await t.user({ userName: name })).not.toBeNull();
  });
});

describe("signed events: the name hygiene of SCIM writes", () => {
  it("trims userName and displayName, finds them by a spaced key, and refuses control characters", async () => {
    const name = `${unique("spaced")}@example.com`;
    const team = unique("Spaced Team");
    const ok = await t.postEvents({
      events: [
        { type: "user.upserted", data: { userName: `  ${name} ` } },
        { type: "group.upserted", data: { displayName: ` ${team} `, members: [{ userName: ` ${name}` }] } },
      ],
    });
    expect(ok.status).toBe(200);
    const user = await t.user({ userName: name });
    expect(user?.resource.userName).toBe(name);
    const group = await t.group({ displayName: team });
    expect(group?.resource.displayName).toBe(team);
    expect(group?.members?.map((m) => m.value)).toEqual([user!.resource.id]);

    const bad = await t.postEvents({
      events: [{ type: "user.upserted", data: { userName: `x${name}\u0000` } }],
    });
    expect(bad.status).toBe(400);
    expect(bad.body.error.items[0].message).toMatch(/"userName".*control characters/);
    expect(await t.user({ userName: `x${name}\u0000` })).toBeNull();

    const deleted = await t.postEvents({ type: "user.deleted", data: { userName: ` ${name} ` } });
    expect(deleted.status).toBe(200);
    expect(await t.user({ userName: name })).toBeNull();
  });
});

describe("signed events: secret rotation and the clock", () => {
  it("accepts a delivery signed with the old and the new secret during a rotation", async () => {
    const name = `${unique("rotation")}@example.com`;
    const raw = JSON.stringify({ type: "user.upserted", data: { userName: name } });
    const id = `msg_${unique("rot")}`;
    const ts = Math.floor(Date.now() / 1000);
    const old = `whsec_${Buffer.from("the previous signing key, 32 b!!").toString("base64")}`;
    const res = await t.request
      .post("/hooks/okta/events")
      .set("Content-Type", "application/json")
      .set("webhook-id", id)
      .set("webhook-timestamp", String(ts))
      .set("webhook-signature", `${signWebhook(old, id, ts, raw)} ${signWebhook(EVENTS_SECRET, id, ts, raw)}`)
      .send(raw);
    expect(res.status).toBe(200);
    expect(await t.user({ userName: name })).not.toBeNull();
  });

  it("refuses a timestamp more than 5 minutes in the future", async () => {
    const res = await t.postEvents({ type: "ping" }, { timestamp: Math.floor(Date.now() / 1000) + 400 });
    expect(res.status).toBe(401);
    expect(res.body.error.code).toBe("timestamp_out_of_tolerance");
  });
});
