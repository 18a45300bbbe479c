/**
 * An embed source's user renamed in case only keeps its embed member id (syncEmbedUser,
 * `embedMemberId`). A resync of the source must agree: it is not held by the deprovisioning guard
 * for a member it would not remove, and it writes nothing (invariants 4 and 8).
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import { type TestBridge, startTestBridge } from "../../helpers/bridge-harness.js";
import { waitFor } from "../../helpers/redis-test-prefix.js";

let h: TestBridge;
beforeAll(async () => {
  h = await startTestBridge("embed-resync-case-only", {
    sources: { okta: { tokens: ["okta-token"], target: { embedTenant: "acme" } } },
  });
});
afterAll(async () => {
  await h?.close();
});

it("a resync after a case-only userName change is not held and writes nothing", async () => {
  const okta = h.scim("okta");
  const mixed = "Case.Only@Example.com";
  const user = await okta.createUser(mixed, { displayName: "Case Only" });
  const others = [];
  for (let i = 0; i < 3; i++) others.push(await okta.createUser(`other${i}@example.com`));
  await okta.createGroup("Case group", [user.id, ...others.map((o) => o.id)]);
  await h.waitForIdle();
  await okta.patchUser(user.id, [{ op: "replace", path: "userName", value: mixed.toLowerCase() }]);
  await h.waitForIdle();
  const writes = h.emulator.counters().writes;

  const res = await h.admin().post("/sources/okta/resync", {});
  expect(res.status).toBe(202);
  let op: { state: string; guard?: unknown } = { state: "queued" };
  await waitFor(
    async () => {
      op = (await h.admin().get(`/resyncs/${res.body.id}`)).body;
      return !["queued", "running"].includes(op.state);
    },
    { timeoutMs: 20_000, what: "the resync to finish" },
  );
  expect(op.state, JSON.stringify(op)).toBe("succeeded");
  await h.waitForIdle();
  expect(h.emulator.counters().writes).toBe(writes);
});
