import { afterEach, describe, expect, it } from "vitest";
import { PlatformError } from "../../../src/platform/platform-error.js";
import type { EntityRef, PatchOperation } from "../../../src/scim/scim-types.js";
import { classifyFailure } from "../../../src/sync/sync-error.js";
import { syncGroup } from "../../../src/sync/sync-group.js";
import { idleGroup, startEmbedHarness } from "../../helpers/narrowing-group.js";
import { type JobsHarness, startJobsHarness } from "./jobs-harness.js";

/**
 * Review n1: the platform asks for a pause (429 with Retry-After, after the client's own retries)
 * in the middle of a narrowing. The sync ends with that pause as it is (the queue waits it out
 * without spending an attempt; no dead letter), the record holds what landed, in doubt, and the
 * next run lands the rest and names the culprit alone.
 */

const TENANT = "acme-n1r-pause";

function refusal(operation: string): PlatformError {
  return new PlatformError(`${operation}: 400`, {
    operation,
    failure: "bad_request",
    transient: false,
    httpStatus: 400,
  });
}

function pause(operation: string): PlatformError {
  return new PlatformError(`${operation}: 429`, {
    operation,
    failure: "rate_limited",
    transient: true,
    httpStatus: 429,
    retryAfterMs: 30_000,
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
    (e: unknown) => e,
  );
}

describe("review n1: a pause asked for in the middle of a narrowing", () => {
  let h: JobsHarness | undefined;
  afterEach(async () => {
    await h?.close();
    h = undefined;
  });

  it("workspace group: the pause ends the sync as a pause; the next run names the culprit alone", async () => {
    h = await startJobsHarness("review-n1r-pause-ws");
    const {
      users: [users],
      group: g,
    } = await idleGroup(h, "okta", "Pause", [["pause", 8]], { domain: "n1r.example", idleMs: 30_000 });
    await h.directory.replaceGroup(
      "okta",
      g.resource.id,
      h.group("Pause"),
      users.map((u) => u.resource.id),
    );
    const ref: EntityRef = { source: "okta", kind: "group", id: g.resource.id };
    const order = (await h.directory.snapshotGroup("okta", g.resource.id))?.desired?.members ?? [];
    const memberIds = order.map((m) => m.value);
    const pids = (await h.state.getUserPlatformIds("okta", memberIds)) as string[];
    const patchGroup = h.platform.patchGroup.bind(h.platform);
    let calls = 0;
    let paused = true;
    // Calls: [0-7] refused, [0-3] refused, [4-7] landed, [0-1] refused: then a pause.
    h.platform.patchGroup = async (id, operations) => {
      calls += 1;
      if (paused && calls === 5) throw pause("patchGroup");
      if (addedIn(operations).includes(pids[0] as string)) throw refusal("patchGroup");
      return patchGroup(id, operations);
    };

    const first = await outcomeOf(h, ref);
    const fate = classifyFailure(first);
    expect(fate).toMatchObject({ permanent: false, rateLimitedForMs: 30_000 });
    expect(new Set(h.platformGroups().get("Pause")?.members)).toEqual(new Set(pids.slice(4)));
    const record = await h.state.getApplied<{ members: string[]; inDoubt?: boolean }>(ref);
    expect(new Set(record?.members)).toEqual(new Set(pids.slice(4)));
    expect(record?.inDoubt).toBe(true);

    paused = false;
    const second = (await outcomeOf(h, ref)) as { code?: string; message?: string };
    expect(second).toMatchObject({ code: "platform_bad_request" });
    expect(second.message).toMatch(/add 1 member\(s\)/);
    expect(second.message).toContain(memberIds[0]);
    expect(new Set(h.platformGroups().get("Pause")?.members)).toEqual(new Set(pids.slice(1)));
  }, 60_000);

  it("embed group: the pause ends the sync as a pause; the next run names the culprit alone", async () => {
    h = await startEmbedHarness("review-n1r-pause-embed", TENANT);
    const {
      users: [users],
      group: g,
    } = await idleGroup(h, "portal", "Embed pause", [["pause", 8]], {
      domain: "n1r.example",
      idleMs: 30_000,
    });
    const addEmbedGroupMembers = h.platform.addEmbedGroupMembers.bind(h.platform);
    let order: string[] | undefined;
    let calls = 0;
    let paused = true;
    h.platform.addEmbedGroupMembers = async (tenant, id, members) => {
      const ids = members.map((u) => u.externalId);
      order ??= ids;
      calls += 1;
      if (paused && calls === 5) throw pause("addEmbedGroupMembers");
      if (ids.includes(order[0] as string)) throw refusal("addEmbedGroupMembers");
      return addEmbedGroupMembers(tenant, id, members);
    };
    await h.directory.replaceGroup(
      "portal",
      g.resource.id,
      h.group("Embed pause"),
      users.map((u) => u.resource.id),
    );
    const ref: EntityRef = { source: "portal", kind: "group", id: g.resource.id };
    const members = () =>
      new Set(
        h!.emulator
          .state()
          .embedTenants.find((t) => t.name === TENANT)
          ?.groups.find((x) => x.name === "Embed pause")?.members,
      );

    const first = await outcomeOf(h, ref);
    expect(classifyFailure(first)).toMatchObject({ permanent: false, rateLimitedForMs: 30_000 });
    expect(members()).toEqual(new Set(order?.slice(4)));
    const record = await h.state.getApplied<{ members: string[]; inDoubt?: boolean }>(ref);
    expect(new Set(record?.members)).toEqual(new Set(order?.slice(4)));
    expect(record?.inDoubt).toBe(true);

    paused = false;
    const second = (await outcomeOf(h, ref)) as { code?: string; message?: string };
    expect(second).toMatchObject({ code: "platform_bad_request" });
    expect(second.message).toMatch(/add 1 member\(s\)/);
    const culprit = users.find((u) => u.resource.userName === order?.[0]);
    expect(second.message).toContain(culprit?.resource.id);
    expect(members()).toEqual(new Set(order?.slice(1)));
  }, 60_000);
});
