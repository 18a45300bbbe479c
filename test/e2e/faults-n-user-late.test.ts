/**
 * Faults-n: user writes that land late (the platform holds them past the client's timeout, then
 * applies them: the emulator's `late` fault) while the identity provider changes the user again,
 * and typed attribute values changed while the platform's attribute definitions cannot be read.
 * Invariant 2: once the late writes have landed and the queues drain, the platform holds the
 * last desired state; nothing is a dead letter.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type TestBridge, startProxiedBridge } from "../helpers/bridge-harness.js";
import type { FaultProxy } from "../helpers/fault-proxy.js";
import { waitFor } from "../helpers/redis-test-prefix.js";

const ENT = "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User";
const TIMEOUT_MS = 800;
/** Later than the client waits, sooner than the late-write check (twice the timeout). */
const LATE_MS = 1_300;

let h: TestBridge;
/** Passes everything on: it only lets the bridge's config name a base URL before the emulator's is known. */
let proxy: FaultProxy;

beforeAll(async () => {
  ({ h, proxy } = await startProxiedBridge("faults-n-user-late", {
    sources: {
      okta: {
        tokens: ["okta-token"],
        attributes: {
          dept: { from: `${ENT}:department`, type: "string" },
          cost: { from: `${ENT}:costCenter`, type: "number" },
        },
      },
    },
    timeoutMs: TIMEOUT_MS,
    maxRetries: 2,
  }));
});
afterAll(async () => {
  await h?.close();
  await proxy?.close();
});

type PlatformUser = { id: string; userName: string; active: boolean };
const named = (userName: string) =>
  (h.emulator.state() as unknown as { users: PlatformUser[] }).users.filter(
    (u) => u.userName.toLowerCase() === userName.toLowerCase(),
  );
const status = async () => (await h.admin().get("/status")).body as { idle: boolean; deadLetters: number };
const lateLanded = (operation: string, since: number) =>
  h.emulator.requests().some((r) => r.seq > since && r.operation === operation && r.fault === "late");
const lastSeq = () => h.emulator.requests().at(-1)?.seq ?? 0;
const setActive = async (id: string, active: boolean) =>
  expect(
    (await h.scim("okta").patchUser(id, [{ op: "replace", path: "active", value: active }])).status,
  ).toBe(200);
/**
 * Whether a write to `path` whose body matches `body` was answered 2xx and sent before the first
 * (late) one of them landed: the late write landed over it (the scenario happened as meant).
 */
const overtaken = (path: string, late: (body: unknown) => boolean, later: (body: unknown) => boolean) => {
  const calls = proxy.calls.filter((c) => c.method === "POST" && c.path === path);
  const held = calls.find((c) => late(c.body));
  return (
    held !== undefined &&
    calls.some((c) => later(c.body) && c.status >= 200 && c.status < 300 && c.at < held.at + LATE_MS)
  );
};
const attrValue = (userName: string, name: string) => {
  const pid = named(userName)[0]?.id as string;
  return h.emulator.data.attributes.valuesOf(pid).find((v) => v.name === name)?.value;
};

describe("faults-n: a bulk call that lands late, the user changed back meanwhile", () => {
  for (const start of [true, false]) {
    const first = start ? "DEACTIVATE" : "ACTIVATE";
    it(`a ${first} landing after the user was ${start ? "activated" : "deactivated"} again: ends ${start ? "active" : "inactive"}`, async () => {
      const userName = `late.${first.toLowerCase()}.n@example.com`;
      const u = await h.scim("okta").createUser(userName, { active: start });
      await h.waitForIdle();
      const since = lastSeq();
      h.emulator.addFault({ type: "late", delayMs: LATE_MS, count: 1, match: { operation: "bulkUsers" } });
      await setActive(u.id, !start);
      // The client's retry of the call is answered (the first is still held): the user flips back.
      await waitFor(() => named(userName)[0]?.active === !start, { what: "the retry" });
      await setActive(u.id, start);
      await waitFor(() => lateLanded("bulkUsers", since), { what: "the late call to land" });
      await h.waitForIdle();
      const action = (a: string) => (body: unknown) => (body as { action?: string }).action === a;
      expect(overtaken("/api/v1/users/bulk", action(first), action(start ? "ACTIVATE" : "DEACTIVATE"))).toBe(
        true,
      );
      expect(named(userName).map((x) => x.active)).toEqual([start]);
      expect(await status()).toMatchObject({ idle: true, deadLetters: 0 });
    }, 30_000);
  }
});

describe("faults-n: typed attribute values under faults", () => {
  it("a value changed while the definitions cannot be listed (503 past the client's retries): the last value lands", async () => {
    const userName = "attr.list.n@example.com";
    const scim = h.scim("okta");
    // No definition is known yet: the first value needs the listing.
    h.emulator.addFault({ type: "error", status: 503, count: 5, match: { operation: "listUserAttributes" } });
    const u = await scim.createUser(userName, { [ENT]: { department: "Sales" } });
    await waitFor(() => h.emulator.faults().length === 0, { what: "the listing's faults to be spent" });
    expect(
      (await scim.patchUser(u.id, [{ op: "replace", path: `${ENT}:department`, value: "Support" }])).status,
    ).toBe(200);
    await h.waitForIdle();
    expect(attrValue(userName, "dept")).toBe("Support");
    expect(await status()).toMatchObject({ idle: true, deadLetters: 0 });
  }, 30_000);

  it("a definition's create landing late, the value changed meanwhile: one definition, the last value", async () => {
    const userName = "attr.def.late.n@example.com";
    const scim = h.scim("okta");
    const since = lastSeq();
    h.emulator.addFault({
      type: "late",
      delayMs: LATE_MS,
      count: 1,
      match: { operation: "createUserAttribute" },
    });
    const u = await scim.createUser(userName, { [ENT]: { costCenter: "17" } });
    await waitFor(() => named(userName).length === 1, { what: "the user" });
    expect(
      (await scim.patchUser(u.id, [{ op: "replace", path: `${ENT}:costCenter`, value: "42" }])).status,
    ).toBe(200);
    await waitFor(() => lateLanded("createUserAttribute", since), { what: "the late create to land" });
    await h.waitForIdle();
    const defs = [...h.emulator.data.attributes.definitions.values()].filter((d) => d.name === "cost");
    expect(defs.map((d) => d.type)).toEqual(["number"]);
    expect(attrValue(userName, "cost")).toBe(42);
    expect(await status()).toMatchObject({ idle: true, deadLetters: 0 });
  }, 30_000);

  it("a value's write landing late, after the next value was written: the last value stands", async () => {
    const userName = "attr.value.late.n@example.com";
    const scim = h.scim("okta");
    const u = await scim.createUser(userName, { [ENT]: { department: "One" } });
    await h.waitForIdle();
    const since = lastSeq();
    h.emulator.addFault({
      type: "late",
      delayMs: LATE_MS,
      count: 1,
      match: { operation: "upsertUserAttributeValue" },
    });
    expect(
      (await scim.patchUser(u.id, [{ op: "replace", path: `${ENT}:department`, value: "Two" }])).status,
    ).toBe(200);
    await waitFor(() => attrValue(userName, "dept") === "Two", { what: "the retry's value" });
    expect(
      (await scim.patchUser(u.id, [{ op: "replace", path: `${ENT}:department`, value: "Three" }])).status,
    ).toBe(200);
    await waitFor(() => lateLanded("upsertUserAttributeValue", since), { what: "the late value to land" });
    await h.waitForIdle();
    const value = (v: string) => (body: unknown) => (body as { value?: unknown }).value === v;
    expect(overtaken("/api/v1/user-attribute-values/", value("Two"), value("Three"))).toBe(true);
    expect(attrValue(userName, "dept")).toBe("Three");
    expect(await status()).toMatchObject({ idle: true, deadLetters: 0 });
  }, 30_000);
});
