import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type TestBridge, startTestBridge } from "../helpers/bridge-harness.js";
import { waitFor } from "../helpers/redis-test-prefix.js";

const memberIds = (members: unknown[] | undefined) =>
  (members ?? []).map((m) => (typeof m === "string" ? m : (m as { value: string }).value)).sort();

/**
 * "Groups change membership by diff (PATCH add/remove in chunks), never by rewriting the whole
 * member list. A member that has no platform id yet does not block the others; the group is
 * synced again when that user lands." End to end, over SCIM.
 */
describe("group membership by diff", () => {
  let h: TestBridge;
  beforeAll(async () => {
    h = await startTestBridge("inv-members", { sources: { okta: { tokens: ["okta-token"] } } });
  });
  afterAll(async () => {
    await h?.close();
  });

  const group = (name: string) => h.emulator.state().groups.find((g) => g.displayName === name);

  it("a 150-member group and a change of two members never replace the member list", async () => {
    const scim = h.scim("okta");
    const ids: string[] = new Array(150);
    await Promise.all(
      Array.from({ length: 10 }, async (_, lane) => {
        for (let i = lane; i < 150; i += 10) ids[i] = (await scim.createUser(`m${i}@example.com`)).id;
      }),
    );
    await h.waitForIdle();
    const big = await scim.createGroup("Big", ids);
    await h.waitForIdle();
    expect(group("Big")?.members).toHaveLength(150);
    const patchesBefore = h.emulator.count("patchGroup");
    const res = await scim.patchGroup(big.id, [
      { op: "remove", path: "members", value: [{ value: ids[0] }] },
      { op: "add", path: "members", value: [{ value: ids[0] }, { value: ids[1] }] },
      { op: "remove", path: "members", value: [{ value: ids[2] }] },
    ]);
    expect(res.status).toBeLessThan(300);
    await h.waitForIdle();
    const users = h.platformUsers();
    expect(group("Big")?.members).toHaveLength(149);
    expect(memberIds(group("Big")?.members)).not.toContain(users.get("m2@example.com")?.id);
    expect(h.emulator.count("patchGroup") - patchesBefore).toBe(1);
    expect(h.emulator.count("replaceGroup")).toBe(0);
    const puts = h.emulator.requests().filter((r) => r.method === "PUT" && r.path.includes("/Groups/"));
    expect(puts).toEqual([]);
  }, 25_000);

  it("a member without a platform id yet does not hold the others back", async () => {
    const scim = h.scim("okta");
    const early = await scim.createUser("early@example.com");
    await h.waitForIdle();
    h.emulator.addFault({ type: "slow", delayMs: 1_500, count: 1, match: { operation: "createUser" } });
    const late = await scim.createUser("late@example.com");
    await scim.createGroup("Waiting", [early.id, late.id]);
    const earlyPid = h.platformUsers().get("early@example.com")?.id as string;
    await waitFor(() => memberIds(group("Waiting")?.members).includes(earlyPid), {
      what: "the group with its ready member",
    });
    expect(h.platformUsers().get("late@example.com")).toBeUndefined(); // still being created
    await h.waitForIdle();
    const latePid = h.platformUsers().get("late@example.com")?.id as string;
    expect(memberIds(group("Waiting")?.members)).toEqual([earlyPid, latePid].sort());
  });
});
