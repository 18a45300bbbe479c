import { Writable } from "node:stream";
import { afterEach, describe, expect, it } from "vitest";
import { createLogger } from "../../../src/observability/logger.js";
import { PlatformError } from "../../../src/platform/platform-error.js";
import type { PlatformFailureCode } from "../../../src/platform/platform-types.js";
import type { EntityRef } from "../../../src/scim/scim-types.js";
import { syncGroup } from "../../../src/sync/sync-group.js";
import { idleGroup, startEmbedHarness } from "../../helpers/narrowing-group.js";
import type { JobsHarness } from "./jobs-harness.js";

/**
 * Review n: an embed-tenant group's member writes refused for good (400) because of one member, as
 * a workspace group's are (refused-group-split.test.ts): the refused chunk is sent again in halves,
 * the others land, the culprit is named in the group's dead letter by the bridge's user id (an
 * embed member's externalId may be a userName: never named), and the group's other changes land.
 */

const TENANT = "acme-n";

function failing(operation: string, failure: PlatformFailureCode, status: number): PlatformError {
  return new PlatformError(`${operation}: ${status}`, {
    operation,
    failure,
    transient: failure === "server",
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

const embedGroup = (h: JobsHarness, name: string) =>
  h.emulator
    .state()
    .embedTenants.find((t) => t.name === TENANT)
    ?.groups.find((g) => g.name === name);

async function syncByHand(
  h: JobsHarness,
  ref: EntityRef,
  logger?: ReturnType<typeof createLogger>,
): Promise<{ code?: string; message?: string } | undefined> {
  return syncGroup(h.syncContext(logger ? { logger } : {}), ref, { resync: false }, {}).then(
    () => undefined,
    (e: unknown) => e as { code?: string; message?: string },
  );
}

describe("review n: an embed group's refused member writes are narrowed and named", () => {
  let h: JobsHarness | undefined;
  afterEach(async () => {
    await h?.close();
    h = undefined;
  });

  it("an add chunk refused because of one member: the others and the rename land, the one is named by its id", async () => {
    h = await startEmbedHarness("review-n-embed-add", TENANT);
    const {
      users: [users],
      group: g,
    } = await idleGroup(h, "portal", "Embed add", [["a", 8]], { domain: "embed-n.example" });
    const culprit = users[5]!;
    const marked = culprit.resource.userName;
    const addEmbedGroupMembers = h.platform.addEmbedGroupMembers.bind(h.platform);
    const sent: string[][] = [];
    const refusedCalls: string[][] = [];
    h.platform.addEmbedGroupMembers = async (tenant, id, members) => {
      sent.push(members.map((u) => u.externalId));
      if (members.some((u) => u.externalId === marked)) {
        refusedCalls.push(members.map((u) => u.externalId));
        throw failing("addEmbedGroupMembers", "bad_request", 400);
      }
      return addEmbedGroupMembers(tenant, id, members);
    };
    await h.directory.replaceGroup(
      "portal",
      g.resource.id,
      h.group("Embed add renamed"),
      users.map((u) => u.resource.id),
    );
    const ref: EntityRef = { source: "portal", kind: "group", id: g.resource.id };
    const err = await syncByHand(h, ref);

    expect(err).toMatchObject({ code: "platform_bad_request" });
    expect(err?.message).toMatch(/add 1 member/);
    expect(err?.message).toContain(culprit.resource.id);
    expect(err?.message).not.toMatch(/@embed-n\.example/);
    const others = users.filter((u) => u !== culprit).map((u) => u.resource.userName);
    expect(new Set(embedGroup(h, "Embed add renamed")?.members)).toEqual(new Set(others));
    // The chunk, then two halves per level down to the one member: 1 + 2 * ceil(log2(8)).
    expect(sent.length).toBeLessThanOrEqual(1 + 2 * 3);
    expect(refusedCalls[0]).toHaveLength(8);
    expect(refusedCalls.at(-1)).toEqual([marked]);

    // The platform accepts the member now: the retry adds it alone.
    h.platform.addEmbedGroupMembers = async (tenant, id, members) => {
      sent.push(members.map((u) => u.externalId));
      return addEmbedGroupMembers(tenant, id, members);
    };
    sent.length = 0;
    expect(await syncByHand(h, ref)).toBeUndefined();
    expect(sent).toEqual([[marked]]);
  }, 60_000);

  it("a removal chunk refused because of one member: the others are removed, the one held and named, the add and the rename land", async () => {
    const { lines, logger } = captureLogger();
    h = await startEmbedHarness("review-n-embed-removal", TENANT, logger);
    const {
      users: [users, joiners],
      group: g,
    } = await idleGroup(
      h,
      "portal",
      "Embed removal",
      [
        ["r", 8],
        ["j", 1],
      ],
      { domain: "embed-n.example", startWith: 0 },
    );
    const joining = joiners[0]!;
    const held = users[2]!;
    const marked = held.resource.userName;
    const removeEmbedGroupMembers = h.platform.removeEmbedGroupMembers.bind(h.platform);
    h.platform.removeEmbedGroupMembers = async (tenant, id, externalIds) => {
      if (externalIds.includes(marked)) throw failing("removeEmbedGroupMembers", "bad_request", 400);
      return removeEmbedGroupMembers(tenant, id, externalIds);
    };
    const staying = users.slice(6);
    await h.directory.replaceGroup("portal", g.resource.id, h.group("Embed removal renamed"), [
      ...staying.map((u) => u.resource.id),
      joining.resource.id,
    ]);
    const ref: EntityRef = { source: "portal", kind: "group", id: g.resource.id };
    const err = await syncByHand(h, ref, logger);

    expect(err).toMatchObject({ code: "platform_bad_request" });
    expect(err?.message).toMatch(/remove 1 member/);
    expect(err?.message).toContain(held.resource.id);
    expect(err?.message).not.toMatch(/@embed-n\.example/);
    expect(new Set(embedGroup(h, "Embed removal renamed")?.members)).toEqual(
      new Set([marked, ...staying.map((u) => u.resource.userName), joining.resource.userName]),
    );
    // Someone keeps the group's access although they left it: said at error level, no personal data.
    const errors = lines.filter((l) => (l["level"] as number) >= 50);
    expect(errors.some((l) => JSON.stringify(l).includes("could not be removed"))).toBe(true);
    for (const line of errors) expect(JSON.stringify(line)).not.toMatch(/@embed-n\.example/);
  }, 60_000);

  it("a failure for good in the middle of the narrowing: the letter names the culprit found before it", async () => {
    h = await startEmbedHarness("review-n-embed-forbidden", TENANT);
    const {
      users: [users],
      group: g,
    } = await idleGroup(h, "portal", "Embed forbidden", [["f", 4]], { domain: "embed-n.example" });
    const addEmbedGroupMembers = h.platform.addEmbedGroupMembers.bind(h.platform);
    let order: string[] | undefined;
    h.platform.addEmbedGroupMembers = async (tenant, id, members) => {
      const ids = members.map((u) => u.externalId);
      order ??= ids;
      // The first of the chunk is refused; the last piece the narrowing sends (the one after the
      // culprit's, [1]) is forbidden: [0-3] refused, [0-1] refused, [2-3] landed, [0] refused, [1].
      if (ids.includes(order[0] as string)) throw failing("addEmbedGroupMembers", "bad_request", 400);
      if (ids.length === 1 && ids[0] === order[1]) throw failing("addEmbedGroupMembers", "forbidden", 403);
      return addEmbedGroupMembers(tenant, id, members);
    };
    await h.directory.replaceGroup(
      "portal",
      g.resource.id,
      h.group("Embed forbidden"),
      users.map((u) => u.resource.id),
    );
    const ref: EntityRef = { source: "portal", kind: "group", id: g.resource.id };
    const err = await syncByHand(h, ref);

    expect(err).toMatchObject({ code: "platform_forbidden" });
    expect(err?.message).toMatch(/add 1 member/);
    const culprit = users.find((u) => u.resource.userName === order?.[0]);
    expect(err?.message).toContain(culprit?.resource.id);
    expect(new Set(embedGroup(h, "Embed forbidden")?.members)).toEqual(new Set(order?.slice(2)));
  }, 60_000);
});
