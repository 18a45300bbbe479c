import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type HooksTestApp, createHooksTestApp } from "./hooks-test-app.js";

/**
 * Senders retry (Standard Webhooks: on a timeout or any non-2xx) while the first attempt may still
 * be running, and two deliveries may upsert the same entity at once. An upsert is "created when
 * absent": losing the race to create it means matching what the other delivery created, not 409.
 */
let t: HooksTestApp;
let n = 0;
const unique = (s: string) => `${s}-${++n}-${Date.now().toString(36)}`;

beforeAll(async () => {
  t = await createHooksTestApp("hooks-events-races");
});
afterAll(async () => {
  await t.close();
});

describe("signed deliveries that race", () => {
  it("answers every concurrent attempt of one webhook-id 2xx and applies it once", async () => {
    const ext = unique("r");
    const team = unique("Racers");
    const body = {
      events: [
        { type: "user.upserted", data: { userName: `${ext}@example.com`, externalId: ext } },
        { type: "group.upserted", data: { displayName: team, members: [{ externalId: ext }] } },
      ],
    };
    const id = `msg_${ext}`;
    const answers = await Promise.all([1, 2, 3, 4].map(() => t.postEvents(body, { id })));
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200]);
    const user = await t.user({ externalId: ext });
    expect((await t.group({ displayName: team }))?.members?.map((m) => m.value)).toEqual([user!.resource.id]);
  });

  it("a retry that arrives while the first attempt applies is not applied again after a newer delivery", async () => {
    // The sender retries X (its first attempt is slow), gets X's 200, then sends Y, which deletes
    // the user X reactivated. The retry of X must not apply X again after Y: the user would come
    // back. It waits for the first attempt and answers `duplicate`.
    const ext = unique("leaver");
    const created = await t.postEvents({
      type: "user.upserted",
      data: { userName: `${ext}@example.com`, externalId: ext, active: false },
    });
    expect(created.status).toBe(200);
    const filler = Array.from({ length: 150 }, (_, i) => ({
      type: "user.upserted",
      data: { userName: `${ext}-f${i}@example.com`, externalId: `${ext}-f${i}` },
    }));
    const x = {
      events: [
        ...filler,
        { type: "user.upserted", data: { userName: `${ext}@example.com`, externalId: ext, active: true } },
      ],
    };
    const id = `msg_${ext}`;
    const first = t.postEvents(x, { id }).then((r) => r);
    // The first attempt is applying (its first events are stored): the sender's retry comes now.
    for (let i = 0; i < 400 && !(await t.user({ externalId: `${ext}-f0` })); i++) {
      await new Promise((r) => setTimeout(r, 5));
    }
    const retry = t.postEvents(x, { id }).then((r) => r);
    expect((await first).status).toBe(200);
    const y = await t.postEvents({ type: "user.deleted", data: { externalId: ext } });
    expect(y.status).toBe(200);
    const again = await retry;
    expect(again.status).toBe(200);
    expect(again.body.status).toBe("duplicate");
    expect(await t.user({ externalId: ext })).toBeNull();
  });

  it("a retry waiting for an attempt that fails applies the delivery itself", async () => {
    const ext = unique("after-failure");
    const id = `msg_${ext}`;
    // An attempt that died mid-way left its claim behind (a lease of its own token).
    await t.redis.set(`${t.prefix}:hooks:okta:events:claim:${id}`, "dead-attempt", "PX", 300);
    const started = Date.now();
    const answer = await t.postEvents(
      { type: "user.upserted", data: { userName: `${ext}@example.com`, externalId: ext } },
      { id },
    );
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ status: "applied", changed: 1 });
    expect(Date.now() - started).toBeGreaterThanOrEqual(250);
    expect(await t.user({ externalId: ext })).not.toBeNull();
    expect(await t.redis.exists(`${t.prefix}:hooks:okta:events:claim:${id}`)).toBe(0);
  });

  it("lets two deliveries upsert the same new user and group at once", async () => {
    const name = `${unique("twice")}@example.com`;
    const team = unique("Twice");
    const body = {
      events: [
        { type: "user.upserted", data: { userName: name } },
        { type: "group.upserted", data: { displayName: team, members: [{ userName: name }] } },
      ],
    };
    const answers = await Promise.all([1, 2, 3, 4].map(() => t.postEvents(body)));
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200]);
    expect((await t.group({ displayName: team }))?.memberCount).toBe(1);
  });
});
