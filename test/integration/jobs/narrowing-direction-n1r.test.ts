import { afterEach, describe, expect, it } from "vitest";
import { PlatformError } from "../../../src/platform/platform-error.js";
import type { PlatformFailureCode } from "../../../src/platform/platform-types.js";
import type { EntityRef, PatchOperation } from "../../../src/scim/scim-types.js";
import { syncGroup } from "../../../src/sync/sync-group.js";
import { idleGroup, startEmbedHarness } from "../../helpers/narrowing-group.js";
import { type JobsHarness, startJobsHarness } from "./jobs-harness.js";

/**
 * Review n1: a removal chunk whose every member the platform refuses (two members it will not take
 * out, each refused alone: the narrowing lands nothing) says nothing about the group's adds. Before,
 * it switched narrowing off for the rest of the sync: an add chunk refused because of one member was
 * then refused whole, every other member of it kept out of the group (no access) and named in the
 * dead letter as refused by the platform, which it never was.
 */

const TENANT = "acme-n1r";

function failing(operation: string, failure: PlatformFailureCode, status: number): PlatformError {
  return new PlatformError(`${operation}: ${status}`, {
    operation,
    failure,
    transient: failure === "server",
    httpStatus: status,
  });
}

const addedIn = (operations: readonly PatchOperation[]): string[] =>
  operations.flatMap((op) =>
    op.op === "add" && op.path === "members" && Array.isArray(op.value)
      ? (op.value as Array<{ value: string }>).map((m) => m.value)
      : [],
  );
const removedIn = (operations: readonly PatchOperation[]): string[] =>
  operations.flatMap((op) => {
    const m = op.op === "remove" ? /^members\[value eq "(.*)"\]$/.exec(op.path ?? "") : null;
    return m ? [m[1] as string] : [];
  });

async function outcomeOf(h: JobsHarness, ref: EntityRef) {
  return syncGroup(h.syncContext(), ref, { resync: false }, {}).then(
    () => undefined,
    (e: unknown) => e as { code?: string; message?: string },
  );
}

describe("review n1: a removal narrowed to nothing does not stop the adds' narrowing", () => {
  let h: JobsHarness | undefined;
  afterEach(async () => {
    await h?.close();
    h = undefined;
  });

  it("workspace group: two members the platform will not remove, one it will not add; the seven others get in", async () => {
    h = await startJobsHarness("review-n1r-direction-ws");
    const {
      users: [leaving, joining],
      group: g,
    } = await idleGroup(
      h,
      "okta",
      "Direction",
      [
        ["leaving", 2],
        ["joining", 8],
      ],
      { domain: "n1r.example", startWith: 0, idleMs: 30_000 },
    );
    await h.directory.replaceGroup(
      "okta",
      g.resource.id,
      h.group("Direction"),
      joining.map((u) => u.resource.id),
    );
    const ref: EntityRef = { source: "okta", kind: "group", id: g.resource.id };
    const order = (await h.directory.snapshotGroup("okta", g.resource.id))?.desired?.members ?? [];
    const memberIds = order.map((m) => m.value);
    const pids = (await h.state.getUserPlatformIds("okta", memberIds)) as string[];
    const leavingPids = (await h.state.getUserPlatformIds(
      "okta",
      leaving.map((u) => u.resource.id),
    )) as string[];
    const culprit = pids[0] as string;
    const patchGroup = h.platform.patchGroup.bind(h.platform);
    h.platform.patchGroup = async (id, operations) => {
      if (removedIn(operations).some((pid) => leavingPids.includes(pid)))
        throw failing("patchGroup", "bad_request", 400);
      if (addedIn(operations).includes(culprit)) throw failing("patchGroup", "bad_request", 400);
      return patchGroup(id, operations);
    };

    const err = await outcomeOf(h, ref);
    expect(err).toMatchObject({ code: "platform_bad_request" });
    // One add refused, two removals refused: no one else is said to be refused.
    expect(err?.message).toMatch(/add 1 member\(s\)/);
    expect(err?.message).toMatch(/remove 2 member\(s\)/);
    for (const id of memberIds.slice(1)) expect(err?.message).not.toContain(id);
    // The seven others are in the group (and the two still there, held).
    expect(new Set(h.platformGroups().get("Direction")?.members)).toEqual(
      new Set([...pids.slice(1), ...leavingPids]),
    );
    const record = await h.state.getApplied<{ members: string[] }>(ref);
    expect(new Set(record?.members)).toEqual(new Set([...pids.slice(1), ...leavingPids]));
  }, 60_000);

  it("embed group: two members the platform will not remove, one it will not add; the seven others get in", async () => {
    h = await startEmbedHarness("review-n1r-direction-embed", TENANT);
    const {
      users: [leaving, joining],
      group: g,
    } = await idleGroup(
      h,
      "portal",
      "Embed direction",
      [
        ["leaving", 2],
        ["joining", 8],
      ],
      { domain: "n1r.example", startWith: 0, idleMs: 30_000 },
    );
    const leavingIds = leaving.map((u) => u.resource.userName);
    const culprit = joining[3]!;
    const marked = culprit.resource.userName;
    const removeEmbedGroupMembers = h.platform.removeEmbedGroupMembers.bind(h.platform);
    h.platform.removeEmbedGroupMembers = async (tenant, id, externalIds) => {
      if (externalIds.some((x) => leavingIds.includes(x)))
        throw failing("removeEmbedGroupMembers", "bad_request", 400);
      return removeEmbedGroupMembers(tenant, id, externalIds);
    };
    const addEmbedGroupMembers = h.platform.addEmbedGroupMembers.bind(h.platform);
    h.platform.addEmbedGroupMembers = async (tenant, id, members) => {
      if (members.some((u) => u.externalId === marked))
        throw failing("addEmbedGroupMembers", "bad_request", 400);
      return addEmbedGroupMembers(tenant, id, members);
    };
    await h.directory.replaceGroup(
      "portal",
      g.resource.id,
      h.group("Embed direction"),
      joining.map((u) => u.resource.id),
    );
    const ref: EntityRef = { source: "portal", kind: "group", id: g.resource.id };

    const err = await outcomeOf(h, ref);
    expect(err).toMatchObject({ code: "platform_bad_request" });
    expect(err?.message).toMatch(/add 1 member\(s\)/);
    expect(err?.message).toMatch(/remove 2 member\(s\)/);
    expect(err?.message).toContain(culprit.resource.id);
    for (const u of joining) if (u !== culprit) expect(err?.message).not.toContain(u.resource.id);
    const others = joining.filter((u) => u !== culprit).map((u) => u.resource.userName);
    const group = h.emulator
      .state()
      .embedTenants.find((t) => t.name === TENANT)
      ?.groups.find((x) => x.name === "Embed direction");
    expect(new Set(group?.members)).toEqual(new Set([...others, ...leavingIds]));
  }, 60_000);
});
