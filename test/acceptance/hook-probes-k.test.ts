/**
 * Acceptance probes (round k) of the signed events intake (Standard Webhooks): what an HR system's
 * admin expects of a batch. A delivery is validated whole before anything is stored (docs/
 * webhooks.md): either it applies, or it is a 400 naming each bad event and stores nothing. A
 * delivery that passes validation must not fail half-way through (some events stored, a 409 or
 * 5xx answered, and its retry failing the same way for ever).
 * Earlier rounds: hook-probes-e.test.ts, hook-probes-i.test.ts, test/e2e/hooks/.
 */
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { signWebhook } from "../../src/hooks/standard-webhooks.js";
import { EVENTS_SECRET, type HooksTestApp, createHooksTestApp } from "../integration/hooks/hooks-test-app.js";

const USER = "urn:ietf:params:scim:schemas:core:2.0:User";
const GROUP = "urn:ietf:params:scim:schemas:core:2.0:Group";
const stamp = Date.now().toString(36);
let n = 0;
const unique = (stem: string) => `${stem}${++n}.${stamp}@example.com`;
const ext = (stem: string) => `hr-${stem}-${++n}-${stamp}`;

let t: HooksTestApp;
beforeAll(async () => {
  t = await createHooksTestApp("acceptance-hook-probes-k");
});
afterAll(async () => {
  await t.close();
});

function postSigned(body: unknown, id = `msg_${randomUUID()}`) {
  const bytes = Buffer.from(JSON.stringify(body), "utf8");
  const timestamp = Math.floor(Date.now() / 1000);
  return t.request
    .post("/hooks/okta/events")
    .set("webhook-id", id)
    .set("webhook-timestamp", String(timestamp))
    .set("webhook-signature", signWebhook(EVENTS_SECRET, id, timestamp, bytes))
    .set("Content-Type", "application/json")
    .serialize(() => bytes as unknown as string)
    .send(bytes);
}

const upsert = (userName: string, extra: Record<string, unknown> = {}) => ({
  type: "user.upserted",
  data: { schemas: [USER], userName, ...extra },
});

describe("signed deliveries whose user.deleted spares someone else", () => {
  it("a delete by externalId and userName that spares the holder of the name does not free it: a later upsert of that name is 400, nothing stored", async () => {
    const kept = { externalId: ext("kept"), userName: unique("kept") };
    expect((await postSigned(upsert(kept.userName, { externalId: kept.externalId }))).status).toBe(200);
    const newcomer = unique("newcomer");
    // The sender deletes "the user of externalId X or userName N": nobody has X, and the holder of N
    // has another externalId (another person): nobody is deleted. N is still held.
    const res = await postSigned({
      events: [
        upsert(newcomer, { externalId: ext("newcomer") }),
        { type: "user.deleted", data: { externalId: ext("gone"), userName: kept.userName } },
        upsert(kept.userName, { externalId: ext("other") }),
      ],
    });
    expect(res.status, JSON.stringify(res.body)).toBe(400);
    expect(res.body.error.items).toEqual([
      { index: 2, message: "userName is already taken by another user" },
    ]);
    expect(await t.user({ userName: newcomer })).toBeNull();
    expect((await t.user({ userName: kept.userName }))?.resource.externalId).toBe(kept.externalId);
  });

  it("a group naming, by userName, the user such a delete spared is applied with that member", async () => {
    const kept = { externalId: ext("member"), userName: unique("member") };
    expect((await postSigned(upsert(kept.userName, { externalId: kept.externalId }))).status).toBe(200);
    const groupExt = ext("team");
    const res = await postSigned({
      events: [
        { type: "user.deleted", data: { externalId: ext("gone"), userName: kept.userName } },
        {
          type: "group.upserted",
          data: {
            schemas: [GROUP],
            externalId: groupExt,
            displayName: `Team ${groupExt}`,
            members: [{ userName: kept.userName }],
          },
        },
      ],
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const group = await t.group({ externalId: groupExt });
    const user = await t.user({ userName: kept.userName });
    expect(user).not.toBeNull();
    expect(group?.members?.map((m: { value: string }) => m.value)).toEqual([user?.resource.id]);
  });

  it("the same for groups: a group.deleted sparing the holder of the displayName keeps it taken", async () => {
    const name = `Kept ${ext("group")}`;
    const keptExt = ext("kept-group");
    const first = await postSigned({
      type: "group.upserted",
      data: { schemas: [GROUP], externalId: keptExt, displayName: name, members: [] },
    });
    expect(first.status).toBe(200);
    const newcomer = unique("g-newcomer");
    const res = await postSigned({
      events: [
        upsert(newcomer, { externalId: ext("g-newcomer") }),
        { type: "group.deleted", data: { externalId: ext("gone-group"), displayName: name } },
        {
          type: "group.upserted",
          data: { schemas: [GROUP], externalId: ext("other-group"), displayName: name },
        },
      ],
    });
    expect(res.status, JSON.stringify(res.body)).toBe(400);
    expect(res.body.error.items).toEqual([
      { index: 2, message: "displayName is already taken by another group" },
    ]);
    expect(await t.user({ userName: newcomer })).toBeNull();
    expect((await t.group({ displayName: name }))?.resource.externalId).toBe(keptExt);
  });
});
