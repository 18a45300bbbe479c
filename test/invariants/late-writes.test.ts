import { afterEach, describe, expect, it } from "vitest";
import { waitFor } from "../helpers/redis-test-prefix.js";
import { type JobsHarness, startJobsHarness } from "../integration/jobs/jobs-harness.js";

/**
 * Invariant 2 under a platform that applies a write after the bridge gave up waiting for it (the
 * emulator's `late` fault: the request is held, then applied whatever the client does). The
 * bridge's retry is answered and the bridge moves on (an opposite change, a lookup that finds
 * nothing); then the held write lands. The entities of a write that got no answer are read on the
 * platform again `sync.lateWriteCheckMs` later, and the bridge is not idle until then.
 */
describe("a platform write that lands after the bridge gave up on it", () => {
  let h: JobsHarness | undefined;
  afterEach(async () => {
    await h?.close();
    h = undefined;
  });

  const quick = { platform: { timeoutMs: 300, maxRetries: 2 } };
  const landed = (op: string) => () =>
    h?.emulator.requests().some((r) => r.operation === op && r.fault === "late") ?? false;

  it("a held bulk ACTIVATE landing after a later DEACTIVATE: the user ends inactive", async () => {
    h = await startJobsHarness("late-bulk", {
      ...quick,
      sync: { lateWriteCheckMs: 2_000, lifecycleBatchWindowMs: 20 },
    });
    const u = await h.directory.createUser("okta", h.user("held@example.com", { active: false }));
    await h.waitForIdle();
    h.emulator.addFault({ type: "late", delayMs: 1_000, count: 1, match: { operation: "bulkUsers" } });

    await h.directory.updateUser("okta", u.resource.id, (c) => ({ ...c.resource, active: true }));
    // The held ACTIVATE timed out and its retry was answered; then the IdP deactivates.
    await waitFor(
      () => h?.emulator.requests().some((r) => r.operation === "bulkUsers" && r.status === 200) ?? false,
      { what: "the retried ACTIVATE to be answered" },
    );
    await h.directory.updateUser("okta", u.resource.id, (c) => ({ ...c.resource, active: false }));
    await waitFor(landed("bulkUsers"), { what: "the held ACTIVATE to land" });

    await h.waitForIdle(15_000);
    expect(h.platformUsers().get("held@example.com")?.["active"]).toBe(false);
    expect(await h.state.countChecks()).toBe(0);
  });

  it("a held member add landing after the member's removal: the group ends without it", async () => {
    h = await startJobsHarness("late-member", { ...quick, sync: { lateWriteCheckMs: 2_000 } });
    const a = await h.directory.createUser("okta", h.user("member@example.com"));
    const g = await h.directory.createGroup("okta", h.group("Team"), []);
    await h.waitForIdle();
    h.emulator.addFault({ type: "late", delayMs: 1_000, count: 1, match: { operation: "patchGroup" } });

    await h.directory.replaceGroup("okta", g.resource.id, h.group("Team"), [a.resource.id]);
    await waitFor(
      () =>
        h?.emulator.requests().some((r) => r.operation === "patchGroup" && r.status === 204 && !r.fault) ??
        false,
      { what: "the retried add to be answered" },
    );
    await h.directory.replaceGroup("okta", g.resource.id, h.group("Team"), []);
    await waitFor(landed("patchGroup"), { what: "the held add to land" });

    await h.waitForIdle(15_000);
    expect([...(h.platformGroups().get("Team")?.members ?? [])]).toEqual([]);
  });

  it("a user deleted at the source while its unanswered create is still held is deprovisioned", async () => {
    h = await startJobsHarness("late-create", {
      platform: { timeoutMs: 300, maxRetries: 1 },
      sources: { okta: { tokens: ["t"], onDelete: "delete" } },
      sync: { lateWriteCheckMs: 2_500 },
    });
    // Both attempts are held past the client's timeout; the first lands 1.5 s after it was sent.
    h.emulator.addFault({ type: "late", delayMs: 1_500, count: 2, match: { operation: "createUser" } });
    const u = await h.directory.createUser("okta", h.user("leaver@example.com"));
    // Deleted while its first create is held: the sync that follows the failed create plans a
    // lookup of the lost create, not a create.
    await waitFor(() => h?.emulator.faults()[0]?.count === 1, { what: "the first create to be held" });
    await h.directory.deleteUser("okta", u.resource.id);

    await h.waitForIdle(15_000);
    expect(h.emulator.requests().some((r) => r.operation === "createUser" && r.status === 201)).toBe(true);
    expect(h.platformUsers().has("leaver@example.com")).toBe(false);
  });

  it("a group deleted at the source while its unanswered create is still held is deleted", async () => {
    h = await startJobsHarness("late-group", {
      platform: { timeoutMs: 300, maxRetries: 1 },
      sync: { lateWriteCheckMs: 2_500 },
    });
    h.emulator.addFault({ type: "late", delayMs: 1_500, count: 2, match: { operation: "createGroup" } });
    const g = await h.directory.createGroup("okta", h.group("Held"), []);
    await waitFor(() => h?.emulator.faults()[0]?.count === 1, { what: "the first create to be held" });
    await h.directory.deleteGroup("okta", g.resource.id);

    await h.waitForIdle(15_000);
    expect(h.emulator.requests().some((r) => r.operation === "createGroup" && r.status === 201)).toBe(true);
    expect(h.platformGroups().has("Held")).toBe(false);
  });
});
