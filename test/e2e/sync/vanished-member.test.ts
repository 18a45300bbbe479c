import { afterEach, describe, expect, it } from "vitest";
import { HttpPlatformClient } from "../../../src/platform/client/http-platform-client.js";
import { NoopRequestBudget } from "../../../src/platform/client/request-budget.js";
import type { PlatformScimGroup } from "../../../src/platform/platform-types.js";
import { PLATFORM_TOKEN, type TestBridge, startTestBridge } from "../../helpers/bridge-harness.js";
import { waitFor } from "../../helpers/redis-test-prefix.js";

function memberIds(group: PlatformScimGroup | null): string[] {
  const members = group?.["members"];
  if (!Array.isArray(members)) return [];
  return members.flatMap((m) =>
    m && typeof m === "object" && !Array.isArray(m) && typeof m["value"] === "string" ? [m["value"]] : [],
  );
}

/**
 * A platform user deleted behind the bridge's back while its sync record still holds its platform
 * id: a group add naming it is refused whole by the strict platform (400: not a platform user).
 * The others added with it must not be kept out, and the vanished user must come back.
 */
describe("a group add naming a platform user deleted behind the bridge's back", () => {
  let h: TestBridge | undefined;
  let platform: HttpPlatformClient | undefined;
  afterEach(async () => {
    platform?.close();
    await h?.close();
    platform = undefined;
    h = undefined;
  });

  it("adds the other members at once, creates the vanished user again, and ends with all of them", async () => {
    // No scheduled reconciliation can run during the test: whatever repairs the group, the sync does.
    h = await startTestBridge("vanished-member", { config: { reconcile: { schedule: "0 0 1 1 *" } } });
    platform = new HttpPlatformClient({
      baseUrl: h.platformUrl,
      token: PLATFORM_TOKEN,
      allowInsecureHttp: true,
      timeoutMs: 2_000,
      maxRetries: 0,
      budget: new NoopRequestBudget(),
    });
    const okta = h.scim("okta");
    const ada = await okta.createUser("ada@vanished.example");
    const bob = await okta.createUser("bob@vanished.example");
    const group = await okta.createGroup("vanished-eng", [ada.id]);
    await h.waitForIdle();
    const groupId = (await platform.findGroupByDisplayName("vanished-eng"))?.id as string;
    const bobBefore = h.platformUsers().get("bob@vanished.example")?.id as string;
    expect(groupId).toBeDefined();
    expect(bobBefore).toBeDefined();

    // Behind the bridge's back: bob's platform user is deleted; the bridge still maps bob to it.
    await platform.deleteUser(bobBefore);
    const others = [];
    for (const name of ["cyd", "dan", "eve"]) others.push(await okta.createUser(`${name}@vanished.example`));
    await h.waitForIdle();

    // bob's creation on the platform fails for now: the others must not wait for it.
    h.emulator.addFault({ type: "error", status: 503, match: { operation: "createUser" } });
    const res = await okta.patchGroup(group.id, [
      { op: "add", path: "members", value: [bob, ...others].map((u) => ({ value: u.id })) },
    ]);
    expect(res.status).toBeLessThan(300);

    const users = () => h?.platformUsers() ?? new Map();
    const idOf = (userName: string) => users().get(userName)?.id as string | undefined;
    const withoutBob = new Set(
      ["ada", "cyd", "dan", "eve"].map((name) => idOf(`${name}@vanished.example`) as string),
    );
    expect(withoutBob.size).toBe(4);
    await waitFor(
      async () => {
        const now = new Set(memberIds(await platform!.getGroup(groupId)));
        return [...withoutBob].every((id) => now.has(id));
      },
      { timeoutMs: 10_000, what: "the other added members to land in the platform group" },
    );
    // They landed while bob is still no platform user (his re-creation is refused so far) ...
    expect(users().has("bob@vanished.example")).toBe(false);
    // ... after the platform refused the add that named him (the case this test is about) ...
    const refused = h.emulator.requests().filter((r) => r.operation === "patchGroup" && r.status === 400);
    expect(refused.length).toBeGreaterThanOrEqual(1);
    // ... and his re-creation is already under way.
    await waitFor(() => (h?.emulator.count("createUser") ?? 0) > 5, {
      timeoutMs: 10_000,
      what: "the bridge to try to create bob again",
    });
    // The group's status says that a member is left out, and why (not silently "synced").
    await waitFor(
      async () =>
        (await h!.admin().get(`/sources/okta/groups/${group.id}`)).body.lastError?.code ===
        "members_recreated",
      { timeoutMs: 10_000, what: "the group's status to name the members left out" },
    );
    expect((await h.admin().get(`/sources/okta/groups/${group.id}`)).body.state).toBe("synced");

    h.emulator.clearFaults();
    await h.waitForIdle(60_000);
    const bobAfter = idOf("bob@vanished.example");
    expect(bobAfter).toBeDefined();
    expect(bobAfter).not.toBe(bobBefore);
    expect(new Set(memberIds(await platform.getGroup(groupId)))).toEqual(
      new Set([...withoutBob, bobAfter as string]),
    );
    const status = await h.admin().get("/status");
    expect(status.body.deadLetters).toBe(0);
    // Once bob is back and added, the group's status is clean again.
    expect((await h.admin().get(`/sources/okta/groups/${group.id}`)).body).toMatchObject({
      state: "synced",
      lastError: null,
    });
    const letters = await h.admin().get("/dead-letters");
    expect(letters.status).toBe(200);
    expect(JSON.stringify(letters.body)).not.toContain(group.id);
  }, 90_000);
});
