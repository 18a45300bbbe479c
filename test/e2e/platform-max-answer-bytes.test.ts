/**
 * `platform.maxAnswerBytes` (docs/operations.md, "Platform rate limits"): the largest platform answer
 * the bridge reads, 16 MiB by default, raised by an operator whose platform holds a group whose
 * member list alone is larger. The setting reaches the platform client: with it at 4 KiB, a group
 * of 5 members syncs, and one of 100 (its answer about 6 KiB) is a `platform_invalid_response`
 * dead letter that names the size.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type TestBridge, startTestBridge } from "../helpers/bridge-harness.js";
import { waitFor } from "../helpers/redis-test-prefix.js";

describe("platform.maxAnswerBytes", () => {
  let h: TestBridge;
  beforeAll(async () => {
    h = await startTestBridge("max-answer-bytes", {
      sources: { okta: { tokens: ["okta-token"] } },
      platform: { maxAnswerBytes: "4kb" },
      config: { sync: { concurrency: 8, attempts: 2, lifecycleBatchWindowMs: 50 } },
    });
  });
  afterAll(async () => {
    await h?.close();
  });

  it("is the platform client's cap on the answers it reads", async () => {
    const scim = h.scim("okta");
    const users = [];
    for (let i = 0; i < 100; i++) users.push(await scim.createUser(`cap.${i}@example.com`));
    await h.waitForIdle(60_000);
    const small = await scim.createGroup(
      "Cap Small",
      users.slice(0, 5).map((u) => u.id),
    );
    const big = await scim.createGroup(
      "Cap Big",
      users.map((u) => u.id),
    );
    const letter = await waitFor(
      async () =>
        (
          (await h.admin().get("/dead-letters")).body.items as Array<{
            ref: { id: string };
            code: string;
            reason: string;
          }>
        ).find((l) => l.ref.id === big.id),
      { timeoutMs: 30_000, what: "the big group's dead letter" },
    );
    expect(letter.code).toBe("platform_invalid_response");
    expect(letter.reason).toMatch(/larger than 4096 bytes/);
    await h.waitForIdle(30_000);
    expect((await h.admin().get(`/sources/okta/groups/${small.id}`)).body.state).toBe("synced");
    expect(h.emulator.state().groups.find((g) => g.displayName === "Cap Small")?.members).toHaveLength(5);
  }, 120_000);
});
