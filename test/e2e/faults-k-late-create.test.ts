/**
 * Faults-k: a create that lands late. The platform holds the first create of a user (or a group)
 * past the client's timeout and applies it later (`late`); the client's retry is answered 201 at
 * once. While the platform user holds the name, the late create is refused (409) and harmless. But
 * when the identity provider deletes the user (onDelete delete) or renames it before the late create
 * lands, the name is free again when it lands: a second, active platform object that no source owns
 * would be left. The bridge waits with a change that frees the name until no write of the entity can
 * still land (its late-write check is due), then applies it. The same for a deleted user's
 * deprovisioning after any late write (an ACTIVATE that lands after the deactivation).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type TestBridge, startProxiedBridge } from "../helpers/bridge-harness.js";
import type { FaultProxy } from "../helpers/fault-proxy.js";
import { waitFor } from "../helpers/redis-test-prefix.js";

const TIMEOUT_MS = 800;
/** Later than the client waits, sooner than the late-write check (twice the timeout). */
const LATE_MS = 1_300;

let h: TestBridge;
/** Passes everything on: it only lets the bridge's config name a base URL before the emulator's is known. */
let proxy: FaultProxy;

beforeAll(async () => {
  ({ h, proxy } = await startProxiedBridge("faults-k-late-create", {
    sources: {
      okta: { tokens: ["okta-token"] },
      gone: { tokens: ["gone-token"], onDelete: "delete" },
      acme: { tokens: ["acme-token"], target: { embedTenant: "late-k" } },
    },
    timeoutMs: TIMEOUT_MS,
    maxRetries: 4,
  }));
});
afterAll(async () => {
  await h?.close();
  await proxy?.close();
});

const named = (userName: string) =>
  (
    h.emulator.state() as unknown as { users: Array<{ id: string; userName: string; active: boolean }> }
  ).users.filter((u) => u.userName.toLowerCase() === userName.toLowerCase());
const groupsNamed = (displayName: string) =>
  (h.emulator.state() as unknown as { groups: Array<{ id: string; displayName: string }> }).groups.filter(
    (g) => g.displayName === displayName,
  );
const lateLanded = (operation: string, since: number) =>
  h.emulator.requests().some((r) => r.seq > since && r.operation === operation && r.fault === "late");

describe("faults-k: a create that lands late, after its retry was answered", () => {
  it("the user deleted at the source (onDelete delete) meanwhile: no platform user is left", async () => {
    const since = h.emulator.requests().at(-1)?.seq ?? 0;
    h.emulator.addFault({ type: "late", delayMs: LATE_MS, count: 1, match: { operation: "createUser" } });
    const gone = h.scim("gone");
    const u = await gone.createUser("late.deleted.k@example.com");
    // The retry's user is there (the first create is still held): the identity provider deletes it.
    await waitFor(async () => named("late.deleted.k@example.com").length === 1, { what: "the retry's user" });
    expect((await gone.deleteUser(u.id)).status).toBe(204);
    await waitFor(async () => lateLanded("createUser", since), { what: "the late create to land" });
    await h.waitForIdle();
    expect(named("late.deleted.k@example.com")).toEqual([]);
    expect((await h.admin().get("/status")).body.deadLetters).toBe(0);
  }, 30_000);

  it("the user renamed at the source meanwhile: one platform user, under the new name", async () => {
    const since = h.emulator.requests().at(-1)?.seq ?? 0;
    h.emulator.addFault({ type: "late", delayMs: LATE_MS, count: 1, match: { operation: "createUser" } });
    const okta = h.scim("okta");
    const u = await okta.createUser("late.old.k@example.com");
    await waitFor(async () => named("late.old.k@example.com").length === 1, { what: "the retry's user" });
    expect(
      (await okta.patchUser(u.id, [{ op: "replace", path: "userName", value: "late.new.k@example.com" }]))
        .status,
    ).toBe(200);
    await waitFor(async () => lateLanded("createUser", since), { what: "the late create to land" });
    await h.waitForIdle();
    expect(named("late.old.k@example.com")).toEqual([]);
    expect(named("late.new.k@example.com").map((x) => x.active)).toEqual([true]);
    expect((await h.admin().get("/status")).body.deadLetters).toBe(0);
  }, 30_000);

  it("a group deleted at the source meanwhile: no platform group is left", async () => {
    const since = h.emulator.requests().at(-1)?.seq ?? 0;
    h.emulator.addFault({ type: "late", delayMs: LATE_MS, count: 1, match: { operation: "createGroup" } });
    const okta = h.scim("okta");
    const g = await okta.createGroup("Late Deleted K");
    await waitFor(async () => groupsNamed("Late Deleted K").length === 1, { what: "the retry's group" });
    expect((await okta.deleteGroup(g.id)).status).toBe(204);
    await waitFor(async () => lateLanded("createGroup", since), { what: "the late create to land" });
    await h.waitForIdle();
    expect(groupsNamed("Late Deleted K")).toEqual([]);
  }, 30_000);

  it("a group renamed at the source meanwhile: one platform group, under the new name", async () => {
    const since = h.emulator.requests().at(-1)?.seq ?? 0;
    h.emulator.addFault({ type: "late", delayMs: LATE_MS, count: 1, match: { operation: "createGroup" } });
    const okta = h.scim("okta");
    const g = await okta.createGroup("Late Old K");
    await waitFor(async () => groupsNamed("Late Old K").length === 1, { what: "the retry's group" });
    await okta.patchGroup(g.id, [{ op: "replace", path: "displayName", value: "Late New K" }]);
    await waitFor(async () => lateLanded("createGroup", since), { what: "the late create to land" });
    await h.waitForIdle();
    expect(groupsNamed("Late Old K")).toEqual([]);
    expect(groupsNamed("Late New K")).toHaveLength(1);
  }, 30_000);

  for (const change of ["deleted", "renamed"] as const) {
    it(`an embed group ${change} at the source meanwhile: no embed group of the old name is left`, async () => {
      const since = h.emulator.requests().at(-1)?.seq ?? 0;
      h.emulator.addFault({
        type: "late",
        delayMs: LATE_MS,
        count: 1,
        match: { operation: "createEmbedGroup" },
      });
      const acme = h.scim("acme");
      const name = `Late Embed ${change} K`;
      const embedNamed = (n: string) =>
        (
          h.emulator.state() as unknown as {
            embedTenants: Array<{ name: string; groups: Array<{ name: string }> }>;
          }
        ).embedTenants
          .find((t) => t.name === "late-k")
          ?.groups.filter((g) => g.name === n) ?? [];
      const g = await acme.createGroup(name);
      await waitFor(async () => embedNamed(name).length === 1, { what: "the retry's embed group" });
      if (change === "deleted") expect((await acme.deleteGroup(g.id)).status).toBe(204);
      else await acme.patchGroup(g.id, [{ op: "replace", path: "displayName", value: `${name} 2` }]);
      await waitFor(async () => lateLanded("createEmbedGroup", since), { what: "the late create to land" });
      await h.waitForIdle();
      expect(embedNamed(name)).toEqual([]);
      expect(embedNamed(`${name} 2`)).toHaveLength(change === "renamed" ? 1 : 0);
    }, 30_000);
  }

  it("a reactivation that lands late, the user deleted at the source (onDelete deactivate) meanwhile: it ends inactive", async () => {
    const okta = h.scim("okta");
    const u = await okta.createUser("late.activate.k@example.com", { active: false });
    await h.waitForIdle();
    const since = h.emulator.requests().at(-1)?.seq ?? 0;
    // Held past the client's timeout, sooner than the late-write check (twice the timeout).
    h.emulator.addFault({
      type: "late",
      delayMs: 2 * TIMEOUT_MS - 100,
      count: 1,
      match: { operation: "bulkUsers" },
    });
    await okta.patchUser(u.id, [{ op: "replace", path: "active", value: true }]);
    // The retry's ACTIVATE is answered (the first is still held): the identity provider deletes the user.
    await waitFor(async () => named("late.activate.k@example.com")[0]?.active === true, {
      what: "the retry",
    });
    expect((await okta.deleteUser(u.id)).status).toBe(204);
    await waitFor(async () => lateLanded("bulkUsers", since), { what: "the late ACTIVATE to land" });
    await h.waitForIdle();
    expect(named("late.activate.k@example.com").map((x) => x.active)).toEqual([false]);
  }, 30_000);
});
