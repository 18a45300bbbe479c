/**
 * Probes n (the operator's surface): the platform refuses what an identity provider sent (400), and
 * the admin fixes it at the source instead of retrying. docs/operations.md: the `dead_letters` gauge
 * "falls when a letter's entity syncs again", and the dead-letter advice says the letter goes once
 * the entity syncs. The identity provider's next change (a corrected userName, a user reactivated,
 * a group renamed, a user deleted) must clear the letter by itself: no retry, nothing left dead.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type TestBridge, startTestBridge } from "../helpers/bridge-harness.js";
import { waitFor } from "../helpers/redis-test-prefix.js";

let h: TestBridge;

beforeAll(async () => {
  h = await startTestBridge("probes-n-source-fix", {
    sources: { okta: { tokens: ["okta-token"] } },
    config: {
      reconcile: { schedule: "0 0 1 1 *", orphans: "report", maxDeprovisionShare: 0.5, keepRuns: 50 },
    },
  });
}, 30_000);
afterAll(async () => {
  await h?.close();
});

async function deadWith(kind: "user" | "group", id: string, code: string): Promise<void> {
  await waitFor(async () => (await h.admin().get(`/sources/okta/${kind}s/${id}`)).body.state === "dead", {
    timeoutMs: 20_000,
    what: `the ${kind} to be a dead letter`,
  });
  const status = (await h.admin().get(`/sources/okta/${kind}s/${id}`)).body;
  expect(status.lastError).toMatchObject({ code, message: expect.stringMatching(/400/) });
  expect((await h.admin().get("/dead-letters")).body.total).toBe(1);
}

async function cleared(kind: "user" | "group", id: string): Promise<void> {
  await h.waitForIdle();
  expect((await h.admin().get("/dead-letters")).body).toEqual({ total: 0, items: [] });
  expect((await h.admin().get("/status")).body).toMatchObject({ idle: true, deadLetters: 0 });
  expect((await h.http.get("/metrics")).text).toMatch(/^dead_letters\{source="okta"\} 0$/m);
  const status = await h.admin().get(`/sources/okta/${kind}s/${id}`);
  if (status.status === 200) expect(status.body).toMatchObject({ state: "synced", lastError: null });
}

describe("probes n: a refusal fixed at the source clears its dead letter by itself", () => {
  it("a user whose create was refused, its userName corrected at the source", async () => {
    h.emulator.setFaults([{ id: "bad", type: "error", status: 400, match: { operation: "createUser" } }]);
    const user = await h.scim("okta").createUser("fix.wrong@example.com");
    await deadWith("user", user.id, "platform_bad_request");
    h.emulator.setFaults([]);
    const patched = await h
      .scim("okta")
      .patchUser(user.id, [{ op: "replace", path: "userName", value: "fix.right@example.com" }]);
    expect(patched.status).toBe(200);
    await cleared("user", user.id);
    expect(h.platformUsers().get("fix.right@example.com")?.active).toBe(true);
    expect(h.platformUsers().has("fix.wrong@example.com")).toBe(false);
  });

  it("a user whose deactivation was refused, turned back on at the source", async () => {
    const user = await h.scim("okta").createUser("fix.back@example.com");
    await h.waitForIdle();
    h.emulator.setFaults([{ id: "bad", type: "error", status: 400, match: { operation: "bulkUsers" } }]);
    await h.scim("okta").patchUser(user.id, [{ op: "replace", path: "active", value: false }]);
    await deadWith("user", user.id, "platform_bad_request");
    h.emulator.setFaults([]);
    await h.scim("okta").patchUser(user.id, [{ op: "replace", path: "active", value: true }]);
    await cleared("user", user.id);
    expect(h.platformUsers().get("fix.back@example.com")?.active).toBe(true);
  });

  it("a group whose create was refused, renamed at the source", async () => {
    h.emulator.setFaults([{ id: "bad", type: "error", status: 400, match: { operation: "createGroup" } }]);
    const group = await h.scim("okta").createGroup("Fix Wrong Name");
    await deadWith("group", group.id, "platform_bad_request");
    h.emulator.setFaults([]);
    await h
      .scim("okta")
      .patchGroup(group.id, [{ op: "replace", path: "displayName", value: "Fix Right Name" }]);
    await cleared("group", group.id);
    const names = (h.emulator.state() as unknown as { groups: Array<{ displayName: string }> }).groups.map(
      (g) => g.displayName,
    );
    expect(names).toContain("Fix Right Name");
    expect(names).not.toContain("Fix Wrong Name");
  });

  it("a user whose create was refused, deleted at the source", async () => {
    h.emulator.setFaults([{ id: "bad", type: "error", status: 400, match: { operation: "createUser" } }]);
    const user = await h.scim("okta").createUser("fix.gone@example.com");
    await deadWith("user", user.id, "platform_bad_request");
    h.emulator.setFaults([]);
    expect((await h.scim("okta").deleteUser(user.id)).status).toBe(204);
    await cleared("user", user.id);
    expect((await h.admin().get(`/sources/okta/users/${user.id}`)).status).toBe(404);
    expect(h.platformUsers().has("fix.gone@example.com")).toBe(false);
  });
});
