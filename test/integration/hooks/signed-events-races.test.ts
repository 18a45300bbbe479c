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
