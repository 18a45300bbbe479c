import { afterEach, describe, expect, it } from "vitest";
import { Writable } from "node:stream";
import { createLogger } from "../../../src/observability/logger.js";
import { PlatformError } from "../../../src/platform/platform-error.js";
import type { EntityRef, PatchOperation } from "../../../src/scim/scim-types.js";
import { syncGroup } from "../../../src/sync/sync-group.js";
import { type JobsHarness, startJobsHarness } from "./jobs-harness.js";

/**
 * Review n1: a strict platform (RFC 7644 §3.5.2.2: removing a member that is not in the group is a
 * 400 noTarget) while a refused removal chunk is narrowed. One piece's removal lands but its answer
 * is lost, and the client's repeat of it is answered 400 noTarget: the members of that piece are
 * out of the group, yet they were taken for culprits, held (the record kept them in), named in the
 * dead letter as "still in it", and said at error level to keep the group's access. Only the member
 * the platform really refuses to remove is held, and the record is what the platform holds.
 */

const removedIn = (operations: readonly PatchOperation[]): string[] =>
  operations.flatMap((op) => {
    const m = op.op === "remove" ? /^members\[value eq "(.*)"\]$/.exec(op.path ?? "") : null;
    return m ? [m[1] as string] : [];
  });

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

describe("review n1: a removal piece whose answer was lost, repeated and answered noTarget", () => {
  let h: JobsHarness | undefined;
  afterEach(async () => {
    await h?.close();
    h = undefined;
  });

  it("workspace group: only the member the platform refuses is held and named; the record is the platform's", async () => {
    h = await startJobsHarness("review-n1r-lost-answer");
    const users = await Promise.all(
      Array.from({ length: 4 }, (_, i) => h!.directory.createUser("okta", h!.user(`lost${i}@n1r.example`))),
    );
    const g = await h.directory.createGroup(
      "okta",
      h.group("Lost"),
      users.map((u) => u.resource.id),
    );
    await h.waitForIdle(30_000);
    await h.stopWorkers();
    h.emulator.setVariations({ noTargetOnMissingMember: true });
    const ref: EntityRef = { source: "okta", kind: "group", id: g.resource.id };
    const order = (await h.state.getApplied<{ members: string[] }>(ref))?.members ?? [];
    expect(order).toHaveLength(4);
    const culprit = order[0] as string;
    const patchGroup = h.platform.patchGroup.bind(h.platform);
    let lost = false;
    h.platform.patchGroup = async (id, operations) => {
      const removed = removedIn(operations);
      if (removed.includes(culprit)) {
        throw new PlatformError("patchGroup: 400", {
          operation: "patchGroup",
          failure: "bad_request",
          transient: false,
          httpStatus: 400,
        });
      }
      if (!lost && removed.length === 2) {
        // The second half of the narrowing: it lands, its answer is lost, the client repeats it.
        lost = true;
        await patchGroup(id, operations);
      }
      return patchGroup(id, operations);
    };
    await h.directory.replaceGroup("okta", g.resource.id, h.group("Lost"), []);
    const { lines, logger } = captureLogger();

    const err = await syncGroup(h.syncContext({ logger }), ref, { resync: false }, {}).then(
      () => undefined,
      (e: unknown) => e as { code?: string; message?: string },
    );
    expect(lost).toBe(true);
    expect(h.platformGroups().get("Lost")?.members).toEqual([culprit]);
    expect(err).toMatchObject({ code: "platform_bad_request" });
    expect(err?.message).toMatch(/remove 1 member\(s\)/);
    const culpritUser = users.find((u) => h!.platformUsers().get(u.resource.userName)?.id === culprit);
    expect(err?.message).toContain(culpritUser?.resource.id);
    for (const u of users) if (u !== culpritUser) expect(err?.message).not.toContain(u.resource.id);
    const record = await h.state.getApplied<{ members: string[] }>(ref);
    expect(record?.members).toEqual([culprit]);
    const errors = lines.filter((l) => (l["level"] as number) >= 50);
    expect(errors.some((l) => JSON.stringify(l).includes("could not be removed"))).toBe(true);
  }, 60_000);
});
