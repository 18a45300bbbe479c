import { afterEach, describe, expect, it } from "vitest";
import { PlatformError } from "../../../src/platform/platform-error.js";
import type { EntityRef, PatchOperation } from "../../../src/scim/scim-types.js";
import { syncGroup } from "../../../src/sync/sync-group.js";
import { type JobsHarness, startJobsHarness } from "./jobs-harness.js";

/**
 * Review m2: a group PATCH refused for good (400/422) because of one or two of its members, every
 * one of them a platform user. The refusal is narrowed to them: the chunk is sent again in halves,
 * so the others (up to 99 people) get their access; only the culprits are the dead letter. The
 * extra calls are bounded, and a refusal of every piece (the group's, not a member's) stops it.
 */

function refusal(status = 422): PlatformError {
  return new PlatformError(`patchGroup: ${status} refused`, {
    operation: "patchGroup",
    failure: "bad_request",
    transient: false,
    httpStatus: status,
  });
}

const addedIn = (operations: readonly PatchOperation[]): string[] =>
  operations.flatMap((op) =>
    op.op === "add" && op.path === "members" && Array.isArray(op.value)
      ? (op.value as Array<{ value: string }>).map((m) => m.value)
      : [],
  );
const removedIn = (operations: readonly PatchOperation[]) =>
  operations.flatMap((op) => (op.op === "remove" && op.path ? [op.path] : []));

async function createUsers(h: JobsHarness, prefix: string, n: number) {
  const users = [];
  for (let i = 0; i < n; i += 50) {
    users.push(
      ...(await Promise.all(
        Array.from({ length: Math.min(50, n - i) }, (_, j) =>
          h.directory.createUser("okta", h.user(`${prefix}${i + j}@split.example`)),
        ),
      )),
    );
  }
  return users;
}

describe("review m2: a refused chunk narrowed to its culprits", () => {
  let h: JobsHarness | undefined;
  afterEach(async () => {
    await h?.close();
    h = undefined;
  });

  it("one member of a chunk of 100 refused: the other 99 land, the dead letter names the one, the extra calls are few", async () => {
    h = await startJobsHarness("review-m2-split-add");
    const users = await createUsers(h, "s", 100);
    const g = await h.directory.createGroup("okta", h.group("Split"), []);
    await h.waitForIdle(60_000);
    const pid = (userName: string) => h!.platformUsers().get(userName)?.id as string;
    const culprit = users[37]!;
    const marked = pid(culprit.resource.userName);
    const patchGroup = h.platform.patchGroup.bind(h.platform);
    const sent: PatchOperation[][] = [];
    h.platform.patchGroup = async (id, operations) => {
      sent.push(operations);
      if (addedIn(operations).includes(marked)) throw refusal();
      return patchGroup(id, operations);
    };
    await h.directory.replaceGroup(
      "okta",
      g.resource.id,
      h.group("Split"),
      users.map((u) => u.resource.id),
    );
    await h.waitForIdle(60_000);

    const everyone = users.map((u) => pid(u.resource.userName));
    expect(new Set(h.platformGroups().get("Split")?.members)).toEqual(
      new Set(everyone.filter((p) => p !== marked)),
    );
    const status = await h.state.getStatus({ source: "okta", kind: "group", id: g.resource.id });
    expect(status).toMatchObject({ state: "dead", lastError: { code: "platform_bad_request" } });
    expect(status?.lastError?.message).toMatch(/add 1 member/);
    expect(status?.lastError?.message).toContain(culprit.resource.id);
    // The chunk, then two halves per level down to the one member: 1 + 2 * ceil(log2(100)).
    expect(sent.length).toBeLessThanOrEqual(1 + 2 * 7);

    // The platform accepts the member now: the retry adds it alone.
    h.platform.patchGroup = async (id, operations) => {
      sent.push(operations);
      return patchGroup(id, operations);
    };
    sent.length = 0;
    const ref: EntityRef = { source: "okta", kind: "group", id: g.resource.id };
    expect((await syncGroup(h.syncContext(), ref, { resync: false }, {})).result).toBe("clean");
    expect(sent.map(addedIn)).toEqual([[marked]]);
  }, 60_000);

  it("two culprits in different chunks and halves: every other member lands, both are named", async () => {
    h = await startJobsHarness("review-m2-split-two");
    const users = await createUsers(h, "t", 150);
    const g = await h.directory.createGroup("okta", h.group("Split two"), []);
    await h.waitForIdle(60_000);
    const pid = (userName: string) => h!.platformUsers().get(userName)?.id as string;
    const culprits = [users[3]!, users[90]!, users[140]!];
    const marked = new Set(culprits.map((u) => pid(u.resource.userName)));
    const patchGroup = h.platform.patchGroup.bind(h.platform);
    h.platform.patchGroup = async (id, operations) => {
      if (addedIn(operations).some((p) => marked.has(p))) throw refusal(400);
      return patchGroup(id, operations);
    };
    await h.stopWorkers();
    await h.directory.replaceGroup(
      "okta",
      g.resource.id,
      h.group("Split two renamed"),
      users.map((u) => u.resource.id),
    );
    const ref: EntityRef = { source: "okta", kind: "group", id: g.resource.id };
    const err = await syncGroup(h.syncContext(), ref, { resync: false }, {}).then(
      () => undefined,
      (e: unknown) => e as { code?: string; message?: string },
    );
    expect(err).toMatchObject({ code: "platform_bad_request" });
    expect(err?.message).toMatch(/add 3 member/);
    for (const u of culprits) expect(err?.message).toContain(u.resource.id);
    const group = h.platformGroups().get("Split two renamed");
    const everyone = users.map((u) => pid(u.resource.userName));
    expect(new Set(group?.members)).toEqual(new Set(everyone.filter((p) => !marked.has(p))));
  }, 60_000);

  it("a removal chunk refused for good because of one member: the others are removed, the one is held", async () => {
    h = await startJobsHarness("review-m2-split-removal");
    const users = await createUsers(h, "r", 40);
    const g = await h.directory.createGroup(
      "okta",
      h.group("Split removal"),
      users.map((u) => u.resource.id),
    );
    await h.waitForIdle(60_000);
    const pid = (userName: string) => h!.platformUsers().get(userName)?.id as string;
    const held = users[11]!;
    const heldPid = pid(held.resource.userName);
    const patchGroup = h.platform.patchGroup.bind(h.platform);
    h.platform.patchGroup = async (id, operations) => {
      if (removedIn(operations).some((path) => path.includes(heldPid))) throw refusal(400);
      return patchGroup(id, operations);
    };
    await h.stopWorkers();
    const staying = users.slice(30);
    await h.directory.replaceGroup(
      "okta",
      g.resource.id,
      h.group("Split removal"),
      staying.map((u) => u.resource.id),
    );
    const ref: EntityRef = { source: "okta", kind: "group", id: g.resource.id };
    const err = await syncGroup(h.syncContext(), ref, { resync: false }, {}).then(
      () => undefined,
      (e: unknown) => e as { code?: string; message?: string },
    );
    expect(err).toMatchObject({ code: "platform_bad_request" });
    expect(err?.message).toMatch(/remove 1 member/);
    expect(err?.message).toContain(held.resource.id);
    expect(new Set(h.platformGroups().get("Split removal")?.members)).toEqual(
      new Set([heldPid, ...staying.map((u) => pid(u.resource.userName))]),
    );
  }, 60_000);
});
