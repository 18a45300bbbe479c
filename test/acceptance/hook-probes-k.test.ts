/**
 * Acceptance probes (round k) of the signed events intake (Standard Webhooks): what an HR system's
 * admin expects of a batch. A delivery is validated whole before anything is stored (docs/
 * webhooks.md): either it applies, or it is a 400 naming each bad event and stores nothing. A
 * delivery that passes validation must not fail half-way through (some events stored, a 409 or
 * 5xx answered, and its retry failing the same way for ever).
 * Earlier rounds: hook-probes-e.test.ts, hook-probes-i.test.ts, test/e2e/hooks/.
 */
import { randomUUID } from "node:crypto";
import { Writable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { HookMetrics } from "../../src/hooks/hook-metrics.js";
import { HookStateStore } from "../../src/hooks/hook-state-store.js";
import { SignedEventsService } from "../../src/hooks/signed-events-service.js";
import { signWebhook } from "../../src/hooks/standard-webhooks.js";
import { createLogger } from "../../src/observability/logger.js";
import { toCanonicalGroup, toCanonicalUser } from "../../src/scim/canonical-resource.js";
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

describe("a refused signed delivery is seen by the operator, not only by its sender", () => {
  it("its bad events are counted malformed or rejected in scim_bridge_hook_events_total; its good ones are not counted applied", async () => {
    const holder = { externalId: ext("holder"), userName: unique("holder") };
    expect((await postSigned(upsert(holder.userName, { externalId: holder.externalId }))).status).toBe(200);
    const before = {
      malformed: await t.counter({ hook: "events", outcome: "malformed" }),
      rejected: await t.counter({ hook: "events", outcome: "rejected", event_type: "user.upserted" }),
      applied: await t.counter({ hook: "events", outcome: "applied" }),
    };
    const res = await postSigned({
      events: [
        upsert(unique("fine"), { externalId: ext("fine") }),
        { type: "user.upserted", data: { schemas: [USER], externalId: ext("nameless") } },
        upsert(holder.userName, { externalId: ext("someone-else") }),
      ],
    });
    expect(res.status).toBe(400);
    expect(await t.counter({ hook: "events", outcome: "malformed" })).toBe(before.malformed + 1);
    expect(await t.counter({ hook: "events", outcome: "rejected", event_type: "user.upserted" })).toBe(
      before.rejected + 1,
    );
    expect(await t.counter({ hook: "events", outcome: "applied" })).toBe(before.applied);
  });

  it("one warn line names the refused events by index and outcome, and holds no userName", async () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk, _enc, done) {
        lines.push(
          ...chunk
            .toString()
            .split("\n")
            .filter((l: string) => l.trim()),
        );
        done();
      },
    });
    const service = new SignedEventsService({
      directory: t.directory,
      state: new HookStateStore(t.redis, t.prefix),
      metrics: new HookMetrics(),
      logger: createLogger("info", {}, sink),
      canon: { user: toCanonicalUser, group: (body) => toCanonicalGroup(body).resource },
    });
    const taken = unique("taken");
    await service.handleDelivery("okta", `msg_${randomUUID()}`, upsert(taken, { externalId: ext("taken") }));
    const secret = unique("secret");
    await expect(
      service.handleDelivery("okta", `msg_${randomUUID()}`, {
        events: [upsert(secret), { type: "nonsense" }, upsert(taken, { externalId: ext("other") })],
      }),
    ).rejects.toThrow(/2 events of the delivery are invalid/);
    const refused = lines.map((l) => JSON.parse(l)).filter((l) => /refused/.test(l.msg));
    expect(refused).toHaveLength(1);
    expect(refused[0]).toMatchObject({
      level: 40,
      source: "okta",
      hook: "events",
      events: 3,
      refused: [
        { index: 1, outcome: "malformed" },
        { index: 2, outcome: "rejected" },
      ],
    });
    for (const line of lines) {
      expect(line).not.toContain(secret);
      expect(line).not.toContain(taken);
    }
  });
});
