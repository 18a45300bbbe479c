import { afterEach, describe, expect, it } from "vitest";
import { PlatformError } from "../../../src/platform/platform-error.js";
import type { PlatformFailureCode } from "../../../src/platform/platform-types.js";
import type { EntityRef, PatchOperation } from "../../../src/scim/scim-types.js";
import { syncGroup } from "../../../src/sync/sync-group.js";
import { type JobsHarness, startJobsHarness } from "./jobs-harness.js";

/**
 * Review n: a refused chunk being narrowed (sent again in halves) meets another failure before the
 * narrowing ends. The culprits already found are not forgotten: a failure that ends the sync for
 * good names them too (a member kept out, or kept in, is never hidden behind the other failure);
 * a transient one leaves a consistent record (what landed, in doubt) and the retry meets the
 * refusal again, narrows it and names the culprit, landing the rest.
 */

function failing(failure: PlatformFailureCode, status: number, transient: boolean): PlatformError {
  return new PlatformError(`patchGroup: ${status}`, {
    operation: "patchGroup",
    failure,
    transient,
    httpStatus: status,
  });
}

const addedIn = (operations: readonly PatchOperation[]): string[] =>
  operations.flatMap((op) =>
    op.op === "add" && op.path === "members" && Array.isArray(op.value)
      ? (op.value as Array<{ value: string }>).map((m) => m.value)
      : [],
  );

async function setUp(h: JobsHarness, name: string) {
  const users = await Promise.all(
    Array.from({ length: 8 }, (_, i) => h.directory.createUser("okta", h.user(`${name}${i}@n.example`))),
  );
  const g = await h.directory.createGroup("okta", h.group(name), []);
  await h.waitForIdle(30_000);
  await h.stopWorkers();
  await h.directory.replaceGroup(
    "okta",
    g.resource.id,
    h.group(name),
    users.map((u) => u.resource.id),
  );
  const ref: EntityRef = { source: "okta", kind: "group", id: g.resource.id };
  // The order the sync adds them in (the store's): the culprit is the first, found by the fifth
  // call ([0-3] refused, [4-7] landed, [0-1] refused, [2-3] landed, [0] refused), then [1] is sent.
  const order = (await h.directory.snapshotGroup("okta", g.resource.id))?.desired?.members ?? [];
  const memberIds = order.map((m) => m.value);
  const pids = (await h.state.getUserPlatformIds("okta", memberIds)) as string[];
  return { ref, memberIds, pids };
}

describe("review n: a failure in the middle of a narrowing", () => {
  let h: JobsHarness | undefined;
  afterEach(async () => {
    await h?.close();
    h = undefined;
  });

  it("a failure for good after a culprit was found: the letter names the culprit besides its own reason", async () => {
    h = await startJobsHarness("review-n-narrow-forbidden");
    const { ref, memberIds, pids } = await setUp(h, "forbidden");
    const [marked, next] = [pids[0] as string, pids[1] as string];
    const patchGroup = h.platform.patchGroup.bind(h.platform);
    h.platform.patchGroup = async (id, operations) => {
      const added = addedIn(operations);
      if (added.includes(marked)) throw failing("bad_request", 400, false);
      if (added.length === 1 && added[0] === next) throw failing("forbidden", 403, false);
      return patchGroup(id, operations);
    };
    const err = await syncGroup(h.syncContext(), ref, { resync: false }, {}).then(
      () => undefined,
      (e: unknown) => e as { code?: string; message?: string },
    );
    expect(err).toMatchObject({ code: "platform_forbidden" });
    expect(err?.message).toMatch(/add 1 member/);
    expect(err?.message).toContain(memberIds[0]);
    expect(err?.message).not.toContain(memberIds[1]);
    // What landed before the failure is on the platform and in the record.
    const landed = pids.slice(2);
    expect(new Set(h.platformGroups().get("forbidden")?.members)).toEqual(new Set(landed));
  }, 60_000);

  it("a transient failure after a culprit was found: the record holds what landed, the retry narrows again and names the culprit", async () => {
    h = await startJobsHarness("review-n-narrow-transient");
    const { ref, memberIds, pids } = await setUp(h, "transient");
    const [marked, next] = [pids[0] as string, pids[1] as string];
    const patchGroup = h.platform.patchGroup.bind(h.platform);
    let down = true;
    const sent: string[][] = [];
    h.platform.patchGroup = async (id, operations) => {
      const added = addedIn(operations);
      sent.push(added);
      if (added.includes(marked)) throw failing("bad_request", 400, false);
      if (down && added.length === 1 && added[0] === next) throw failing("server", 503, true);
      return patchGroup(id, operations);
    };
    await expect(syncGroup(h.syncContext(), ref, { resync: false }, {})).rejects.toMatchObject({
      code: "platform_server",
    });
    const landed = pids.slice(2);
    expect(new Set(h.platformGroups().get("transient")?.members)).toEqual(new Set(landed));
    const record = await h.state.getApplied<{ members: string[]; inDoubt?: boolean }>(ref);
    expect(new Set(record?.members)).toEqual(new Set(landed));
    expect(record?.inDoubt).toBe(true);

    // The platform serves again: the retry sends what is missing, the culprit is refused again
    // (narrowed: [0, 1] refused, [0] refused, [1] landed) and named; nothing that landed is re-sent.
    down = false;
    sent.length = 0;
    const err = await syncGroup(h.syncContext(), ref, { resync: false }, {}).then(
      () => undefined,
      (e: unknown) => e as { code?: string; message?: string },
    );
    expect(err).toMatchObject({ code: "platform_bad_request" });
    expect(err?.message).toMatch(/add 1 member/);
    expect(err?.message).toContain(memberIds[0]);
    expect(sent).toEqual([[marked, next], [marked], [next]]);
    expect(new Set(h.platformGroups().get("transient")?.members)).toEqual(new Set(pids.slice(1)));
  }, 60_000);
});
