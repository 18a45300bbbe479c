import { Writable } from "node:stream";
import { afterEach, describe, expect, it } from "vitest";
import { createLogger } from "../../../src/observability/logger.js";
import { PlatformError } from "../../../src/platform/platform-error.js";
import type { EntityRef, PatchOperation } from "../../../src/scim/scim-types.js";
import { syncGroup } from "../../../src/sync/sync-group.js";
import { type JobsHarness, startJobsHarness } from "./jobs-harness.js";

/**
 * Review m: a workspace group's sync against refusals of the platform (400/422 for good) and
 * members deleted behind the bridge's back, spread over many chunks. What the platform refuses is
 * left out or held (a visible dead letter); everything else lands in the same sync.
 */

function refusal(operation: string, status = 400): PlatformError {
  return new PlatformError(`${operation}: ${status} refused`, {
    operation,
    failure: "bad_request",
    transient: false,
    httpStatus: status,
  });
}

function captureLogger() {
  const lines: Array<Record<string, unknown>> = [];
  const sink = new Writable({
    write(chunk, _enc, done) {
      for (const line of String(chunk).split("\n")) if (line.trim()) lines.push(JSON.parse(line));
      done();
    },
  });
  return { lines, logger: createLogger("info", {}, sink) };
}

async function metricValue(h: JobsHarness, name: string, labels: Record<string, string>): Promise<number> {
  const metric = await h.registry.getSingleMetric(name)?.get();
  const hit = metric?.values.find((v) => Object.entries(labels).every(([k, val]) => v.labels[k] === val));
  return hit?.value ?? 0;
}

async function createUsers(h: JobsHarness, prefix: string, n: number) {
  const users = [];
  for (let i = 0; i < n; i += 50) {
    users.push(
      ...(await Promise.all(
        Array.from({ length: Math.min(50, n - i) }, (_, j) =>
          h.directory.createUser("okta", h.user(`${prefix}${i + j}@m.example`)),
        ),
      )),
    );
  }
  return users;
}

const removedIn = (operations: readonly PatchOperation[]) =>
  operations.flatMap((op) => (op.op === "remove" && op.path ? [op.path] : []));
const addedIn = (operations: readonly PatchOperation[]): string[] =>
  operations.flatMap((op) =>
    op.op === "add" && op.path === "members" && Array.isArray(op.value)
      ? (op.value as Array<{ value: string }>).map((m) => m.value)
      : [],
  );

describe("review m: refusals spread over a group's chunks", () => {
  let h: JobsHarness | undefined;
  afterEach(async () => {
    await h?.close();
    h = undefined;
  });

  it("members deleted on the platform in more chunks than the sync's rounds: left out, the sync converges in one job", async () => {
    h = await startJobsHarness("review-m-vanished-chunks");
    const users = await createUsers(h, "v", 400);
    const g = await h.directory.createGroup("okta", h.group("Vanished chunks"), []);
    await h.waitForIdle(60_000);
    // The sync run by hand, once (no worker: no retry, no user re-created meanwhile).
    await h.stopWorkers();
    await h.directory.replaceGroup(
      "okta",
      g.resource.id,
      h.group("Vanished chunks"),
      users.map((u) => u.resource.id),
    );
    const ref: EntityRef = { source: "okta", kind: "group", id: g.resource.id };
    // Members deleted behind the bridge's back, one at each 100th place of the order the sync adds
    // them in: each add chunk (re-planned after the one before was refused) names one of them.
    const order = (await h.directory.snapshotGroup("okta", g.resource.id))?.desired?.members ?? [];
    const pids = await h.state.getUserPlatformIds(
      "okta",
      order.map((m) => m.value),
    );
    const gone = [0, 100, 200, 300, 399].map((i) => pids[i] as string);
    for (const id of gone) await h.platform.deleteUser(id);
    const outcome = await syncGroup(h.syncContext(), ref, { resync: false }, {});

    expect(outcome).toMatchObject({ result: "clean", warnings: [{ code: "members_recreated" }] });
    const members = new Set(h.platformGroups().get("Vanished chunks")?.members);
    expect(members.size).toBe(395);
    for (const id of gone) expect(members.has(id)).toBe(false);
  }, 120_000);

  it("the round budget still ends a sync the platform never lets converge (its PATCHes answered 404 for ever)", async () => {
    h = await startJobsHarness("review-m-budget-bound");
    const users = await createUsers(h, "b", 150);
    await h.waitForIdle(60_000);
    await h.stopWorkers();
    // Every PATCH answers 404 (the group "gone"), yet the group is still there to adopt by name:
    // the sync creates, adopts and PATCHes again and again. The budget must end it.
    let patches = 0;
    h.platform.patchGroup = async () => {
      patches++;
      throw new PlatformError("patchGroup: 404", {
        operation: "patchGroup",
        failure: "not_found",
        transient: false,
        httpStatus: 404,
      });
    };
    const g = await h.directory.createGroup(
      "okta",
      h.group("Never"),
      users.map((u) => u.resource.id),
    );
    const ref: EntityRef = { source: "okta", kind: "group", id: g.resource.id };
    await expect(syncGroup(h.syncContext(), ref, { resync: false }, {})).rejects.toMatchObject({
      code: "not_converging",
    });
    expect(patches).toBeGreaterThan(0);
    expect(patches).toBeLessThanOrEqual(4);
  }, 60_000);

  it("a removal refused for good: the adds and the rename land, a loud dead letter, the retry sends only the removal", async () => {
    const { lines, logger } = captureLogger();
    h = await startJobsHarness("review-m-refused-removal", { logger });
    const leaving = await h.directory.createUser("okta", h.user("leaving@m.example"));
    const staying = await h.directory.createUser("okta", h.user("staying@m.example"));
    const joining = await h.directory.createUser("okta", h.user("joining@m.example"));
    const g = await h.directory.createGroup("okta", h.group("Held"), [
      leaving.resource.id,
      staying.resource.id,
    ]);
    await h.waitForIdle();
    const pid = (userName: string) => h!.platformUsers().get(userName)?.id as string;
    const leavingPid = pid("leaving@m.example");

    // The platform refuses (400, for good: the group read again still holds the member) any PATCH
    // that removes the member who leaves.
    const patchGroup = h.platform.patchGroup.bind(h.platform);
    let refuse = true;
    const sent: PatchOperation[][] = [];
    h.platform.patchGroup = async (id, operations) => {
      sent.push(operations);
      if (refuse && removedIn(operations).some((path) => path.includes(leavingPid)))
        throw refusal("patchGroup");
      return patchGroup(id, operations);
    };
    await h.directory.replaceGroup("okta", g.resource.id, h.group("Held renamed"), [
      staying.resource.id,
      joining.resource.id,
    ]);
    await h.waitForIdle();

    // The add and the rename landed; the member the platform would not remove is still in.
    const group = h.platformGroups().get("Held renamed");
    expect(new Set(group?.members)).toEqual(
      new Set([leavingPid, pid("staying@m.example"), pid("joining@m.example")]),
    );
    const ref: EntityRef = { source: "okta", kind: "group", id: g.resource.id };
    const status = await h.state.getStatus(ref);
    expect(status).toMatchObject({ state: "dead", lastError: { code: "platform_bad_request" } });
    expect(status?.lastError?.message).toMatch(/remove 1 member/);
    // Loud: counted, and logged at error level without personal data.
    expect(await metricValue(h, "dead_letters_total", { source: "okta", code: "platform_bad_request" })).toBe(
      1,
    );
    const errors = lines.filter((l) => (l["level"] as number) >= 50);
    expect(errors.some((l) => JSON.stringify(l).includes("could not be removed"))).toBe(true);
    for (const line of errors) {
      expect(JSON.stringify(line)).not.toMatch(/@m\.example/);
      expect(JSON.stringify(line)).not.toContain(leavingPid);
    }

    // The platform accepts it now: a retry sends the removal alone.
    refuse = false;
    sent.length = 0;
    const outcome = await syncGroup(h.syncContext(), ref, { resync: false }, {});
    expect(outcome.result).toBe("clean");
    expect(sent).toHaveLength(1);
    expect(removedIn(sent[0] ?? [])).toHaveLength(1);
    expect(addedIn(sent[0] ?? [])).toEqual([]);
    expect(new Set(h.platformGroups().get("Held renamed")?.members)).toEqual(
      new Set([pid("staying@m.example"), pid("joining@m.example")]),
    );
  });

  it("a removal refused for good, then the group gone on the platform: created again without that member, no dead letter", async () => {
    h = await startJobsHarness("review-m-held-removal-gone");
    const leaving = await h.directory.createUser("okta", h.user("leaving@gone-m.example"));
    const staying = await h.directory.createUser("okta", h.user("staying@gone-m.example"));
    const g = await h.directory.createGroup("okta", h.group("Gone"), [
      leaving.resource.id,
      staying.resource.id,
    ]);
    await h.waitForIdle();
    const leavingPid = h.platformUsers().get("leaving@gone-m.example")?.id as string;
    const groupPid = h.platformGroups().get("Gone")?.id as string;
    // The removal is refused for good; the rename after it finds the group deleted behind the
    // bridge's back (404).
    const patchGroup = h.platform.patchGroup.bind(h.platform);
    h.platform.patchGroup = async (id, operations) => {
      if (removedIn(operations).some((path) => path.includes(leavingPid))) throw refusal("patchGroup");
      if (operations.some((op) => op.path === "displayName")) await h!.platform.deleteGroup(groupPid);
      return patchGroup(id, operations);
    };
    await h.stopWorkers();
    await h.directory.replaceGroup("okta", g.resource.id, h.group("Gone renamed"), [staying.resource.id]);
    const ref: EntityRef = { source: "okta", kind: "group", id: g.resource.id };
    const outcome = await syncGroup(h.syncContext(), ref, { resync: false }, {});

    expect(outcome.result).toBe("clean");
    expect(h.platformGroups().get("Gone renamed")?.members).toEqual([
      h.platformUsers().get("staying@gone-m.example")?.id,
    ]);
  });

  it("a create refused for good although every member is a platform user: the group exists, the refused chunk is a dead letter", async () => {
    h = await startJobsHarness("review-m-refused-create");
    const users = await createUsers(h, "c", 101);
    await h.waitForIdle(60_000);
    const marked = h.platformUsers().get("c0@m.example")?.id as string;
    // The platform refuses any write that would add the marked member.
    const createGroup = h.platform.createGroup.bind(h.platform);
    h.platform.createGroup = async (body) => {
      const members = (body["members"] as Array<{ value: string }> | undefined) ?? [];
      if (members.some((m) => m.value === marked)) throw refusal("createGroup", 422);
      return createGroup(body);
    };
    const patchGroup = h.platform.patchGroup.bind(h.platform);
    const refusedAdds: string[][] = [];
    h.platform.patchGroup = async (id, operations) => {
      if (addedIn(operations).includes(marked)) {
        refusedAdds.push(addedIn(operations));
        throw refusal("patchGroup", 422);
      }
      return patchGroup(id, operations);
    };
    const g = await h.directory.createGroup(
      "okta",
      h.group("Created bare"),
      users.map((u) => u.resource.id),
    );
    await h.waitForIdle(60_000);

    const group = h.platformGroups().get("Created bare");
    expect(group).toBeDefined();
    // The refused chunk is narrowed to the marked member (review m2): sent again in halves, the
    // refused half halved again; the other members of the chunk get in. Which chunk names it (the
    // 100 or the one left over) follows the group's member order, which is the store's, not ours.
    expect([1, 100]).toContain(refusedAdds[0]?.length);
    expect(refusedAdds.length).toBeLessThanOrEqual(1 + 2 * 7);
    expect(refusedAdds.at(-1)).toEqual([marked]);
    const refused = new Set([marked]);
    const everyone = users.map((u) => h!.platformUsers().get(u.resource.userName)?.id as string);
    expect(new Set(group?.members)).toEqual(new Set(everyone.filter((id) => !refused.has(id))));
    expect(group?.members.length).toBeGreaterThan(0);
    const status = await h.state.getStatus({ source: "okta", kind: "group", id: g.resource.id });
    expect(status).toMatchObject({ state: "dead", lastError: { code: "platform_bad_request" } });
    expect(status?.lastError?.message).toMatch(new RegExp(`add ${refused.size} member`));
  }, 60_000);
});

describe("review m: an embed group's refused add, then the group gone on the platform", () => {
  let h: JobsHarness | undefined;
  afterEach(async () => {
    await h?.close();
    h = undefined;
  });

  it("the refusal is not forgotten: the group is created again, the refused member sent again, and the refusal that stands is the dead letter", async () => {
    h = await startJobsHarness("review-m-embed-refused-gone", {
      sources: { portal: { tokens: ["t"], target: { embedTenant: "acme-m" } } },
    });
    const embedGroup = (name: string) =>
      h?.emulator
        .state()
        .embedTenants.find((t) => t.name === "acme-m")
        ?.groups.find((g) => g.name === name);
    const refusedOne = await h.directory.createUser("portal", h.user("refused@embed-m.example"));
    const staying = await h.directory.createUser("portal", h.user("staying@embed-m.example"));
    const g = await h.directory.createGroup("portal", h.group("Embed M"), [staying.resource.id]);
    await h.waitForIdle();
    // The platform refuses (for good) every add naming the refused member; at the first refusal the
    // embed group is deleted behind the bridge's back, so the rename after it answers 404.
    const addEmbedGroupMembers = h.platform.addEmbedGroupMembers.bind(h.platform);
    let refusals = 0;
    h.platform.addEmbedGroupMembers = async (tenant, id, users) => {
      if (users.some((u) => u.externalId === "refused@embed-m.example")) {
        if (refusals++ === 0) await h!.platform.deleteEmbedGroup(tenant, id);
        throw refusal("addEmbedGroupMembers");
      }
      return addEmbedGroupMembers(tenant, id, users);
    };
    await h.directory.replaceGroup("portal", g.resource.id, h.group("Embed M renamed"), [
      staying.resource.id,
      refusedOne.resource.id,
    ]);
    await h.waitForIdle();

    // Sent again to the group created again, refused again: that refusal is the dead letter. Its
    // chunk (both members) is narrowed as a workspace group's is (review n): the member it does not
    // name gets in, the refused one is sent alone and refused a third time.
    expect(refusals).toBe(3);
    expect(embedGroup("Embed M renamed")?.members).toEqual(["staying@embed-m.example"]);
    const status = await h.state.getStatus({ source: "portal", kind: "group", id: g.resource.id });
    expect(status).toMatchObject({ state: "dead", lastError: { code: "platform_bad_request" } });
    expect(status?.lastError?.message).toMatch(/add 1 member/);
    expect(status?.lastError?.message).toContain(refusedOne.resource.id);
  }, 60_000);
});
