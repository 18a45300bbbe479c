import { afterEach, describe, expect, it } from "vitest";
import { PlatformError } from "../../../src/platform/platform-error.js";
import type { EntityRef, PatchOperation } from "../../../src/scim/scim-types.js";
import { syncGroup } from "../../../src/sync/sync-group.js";
import { idleGroup, startEmbedHarness } from "../../helpers/narrowing-group.js";
import { type JobsHarness, startJobsHarness } from "./jobs-harness.js";

/**
 * Review n1: the group is deleted on the platform while a refused chunk is being narrowed (the
 * emulator answers the next piece 404). The group is created again, every member but the culprit
 * gets in, the culprit is named in the dead letter, and the record is the new group as it is.
 */

const TENANT = "acme-n1r-gone";

function refusal(operation: string): PlatformError {
  return new PlatformError(`${operation}: 400`, {
    operation,
    failure: "bad_request",
    transient: false,
    httpStatus: 400,
  });
}

const addedIn = (operations: readonly PatchOperation[]): string[] =>
  operations.flatMap((op) =>
    op.op === "add" && op.path === "members" && Array.isArray(op.value)
      ? (op.value as Array<{ value: string }>).map((m) => m.value)
      : [],
  );

async function outcomeOf(h: JobsHarness, ref: EntityRef) {
  return syncGroup(h.syncContext(), ref, { resync: false }, {}).then(
    () => undefined,
    (e: unknown) => e as { code?: string; message?: string },
  );
}

describe("review n1: the group deleted on the platform in the middle of a narrowing", () => {
  let h: JobsHarness | undefined;
  afterEach(async () => {
    await h?.close();
    h = undefined;
  });

  for (const when of ["before the culprit is found", "after the culprit is found"] as const) {
    it(`workspace group, deleted ${when}: created again with the others, the culprit named`, async () => {
      h = await startJobsHarness(`review-n1r-gone-ws-${when.split(" ")[0]}`);
      const {
        users: [users],
        group: g,
      } = await idleGroup(h, "okta", "Gone", [["gone", 8]], { domain: "n1r.example", idleMs: 30_000 });
      await h.directory.replaceGroup(
        "okta",
        g.resource.id,
        h.group("Gone"),
        users.map((u) => u.resource.id),
      );
      const ref: EntityRef = { source: "okta", kind: "group", id: g.resource.id };
      const first = h.platformGroups().get("Gone")?.id;
      const order = (await h.directory.snapshotGroup("okta", g.resource.id))?.desired?.members ?? [];
      const memberIds = order.map((m) => m.value);
      const pids = (await h.state.getUserPlatformIds("okta", memberIds)) as string[];
      const culprit = pids[0] as string;
      const patchGroup = h.platform.patchGroup.bind(h.platform);
      let calls = 0;
      // Calls: [0-7] refused, [0-3] refused, [4-7], [0-1] refused, [2-3], [0] refused, [1].
      const deleteAt = when === "before the culprit is found" ? 2 : 6;
      h.platform.patchGroup = async (id, operations) => {
        calls += 1;
        if (calls === deleteAt) await h!.platform.deleteGroup(id);
        if (addedIn(operations).includes(culprit)) throw refusal("patchGroup");
        return patchGroup(id, operations);
      };
      const createGroup = h.platform.createGroup.bind(h.platform);
      h.platform.createGroup = async (body) => {
        const members = (body["members"] as Array<{ value: string }> | undefined) ?? [];
        if (members.some((m) => m.value === culprit)) throw refusal("createGroup");
        return createGroup(body);
      };

      const err = await outcomeOf(h, ref);
      expect(err).toMatchObject({ code: "platform_bad_request" });
      expect(err?.message).toMatch(/add 1 member\(s\)/);
      expect(err?.message).toContain(memberIds[0]);
      const group = h.platformGroups().get("Gone");
      expect(group?.id).not.toBe(first);
      expect(new Set(group?.members)).toEqual(new Set(pids.slice(1)));
      const record = await h.state.getApplied<{ platformId?: string; members: string[]; inDoubt?: boolean }>(
        ref,
      );
      expect(record?.platformId).toBe(group?.id);
      expect(new Set(record?.members)).toEqual(new Set(pids.slice(1)));
    }, 60_000);

    it(`embed group, deleted ${when}: created again with the others, the culprit named`, async () => {
      h = await startEmbedHarness(`review-n1r-gone-embed-${when.split(" ")[0]}`, TENANT);
      const {
        users: [users],
        group: g,
      } = await idleGroup(h, "portal", "Embed gone", [["gone", 8]], {
        domain: "n1r.example",
        idleMs: 30_000,
      });
      const addEmbedGroupMembers = h.platform.addEmbedGroupMembers.bind(h.platform);
      let order: string[] | undefined;
      let calls = 0;
      const deleteAt = when === "before the culprit is found" ? 2 : 6;
      h.platform.addEmbedGroupMembers = async (tenant, id, members) => {
        const ids = members.map((u) => u.externalId);
        order ??= ids;
        calls += 1;
        if (calls === deleteAt) await h!.platform.deleteEmbedGroup(tenant, id);
        if (ids.includes(order[0] as string)) throw refusal("addEmbedGroupMembers");
        return addEmbedGroupMembers(tenant, id, members);
      };
      await h.directory.replaceGroup(
        "portal",
        g.resource.id,
        h.group("Embed gone"),
        users.map((u) => u.resource.id),
      );
      const ref: EntityRef = { source: "portal", kind: "group", id: g.resource.id };
      const first = (await h.state.getApplied<{ platformId?: string }>(ref))?.platformId;

      const err = await outcomeOf(h, ref);
      expect(err).toMatchObject({ code: "platform_bad_request" });
      expect(err?.message).toMatch(/add 1 member\(s\)/);
      const culprit = users.find((u) => u.resource.userName === order?.[0]);
      expect(err?.message).toContain(culprit?.resource.id);
      const group = h.emulator
        .state()
        .embedTenants.find((t) => t.name === TENANT)
        ?.groups.find((x) => x.name === "Embed gone");
      expect(new Set(group?.members)).toEqual(new Set(order?.slice(1)));
      const record = await h.state.getApplied<{ platformId?: string; members: string[] }>(ref);
      expect(record?.platformId).toBe(group?.id);
      expect(group?.id).not.toBe(first);
      expect(new Set(record?.members)).toEqual(new Set(order?.slice(1)));
    }, 60_000);
  }
});
