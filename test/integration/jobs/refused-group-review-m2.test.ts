import { afterEach, describe, expect, it } from "vitest";
import { PlatformError } from "../../../src/platform/platform-error.js";
import type { EntityRef, PatchOperation } from "../../../src/scim/scim-types.js";
import { syncGroup } from "../../../src/sync/sync-group.js";
import { type JobsHarness, startJobsHarness } from "./jobs-harness.js";

/** Review m2: a workspace group's refused removals, the corners the review found. */

function refusal(): PlatformError {
  return new PlatformError("patchGroup: 400 refused", {
    operation: "patchGroup",
    failure: "bad_request",
    transient: false,
    httpStatus: 400,
  });
}
const removedIn = (operations: readonly PatchOperation[]) =>
  operations.flatMap((op) => (op.op === "remove" && op.path ? [op.path] : []));

describe("review m2: refused removals", () => {
  let h: JobsHarness | undefined;
  afterEach(async () => {
    await h?.close();
    h = undefined;
  });

  it("a refused removal whose fresh look finds the group gone: the group is created again and the old platform id is owned no more", async () => {
    h = await startJobsHarness("review-m2-reread-gone");
    const leaving = await h.directory.createUser("okta", h.user("leaving@reread-m2.example"));
    const staying = await h.directory.createUser("okta", h.user("staying@reread-m2.example"));
    const g = await h.directory.createGroup("okta", h.group("Reread"), [
      leaving.resource.id,
      staying.resource.id,
    ]);
    await h.waitForIdle();
    const oldId = h.platformGroups().get("Reread")?.id as string;
    const leavingPid = h.platformUsers().get("leaving@reread-m2.example")?.id as string;
    // The removal is refused (400) because the group was deleted behind the bridge's back just then.
    const patchGroup = h.platform.patchGroup.bind(h.platform);
    h.platform.patchGroup = async (id, operations) => {
      if (removedIn(operations).some((path) => path.includes(leavingPid))) {
        await h!.platform.deleteGroup(id);
        throw refusal();
      }
      return patchGroup(id, operations);
    };
    await h.stopWorkers();
    await h.directory.replaceGroup("okta", g.resource.id, h.group("Reread"), [staying.resource.id]);
    const ref: EntityRef = { source: "okta", kind: "group", id: g.resource.id };
    const outcome = await syncGroup(h.syncContext(), ref, { resync: false }, {});

    expect(outcome.result).toBe("clean");
    const group = h.platformGroups().get("Reread");
    expect(group?.id).not.toBe(oldId);
    expect(group?.members).toEqual([h.platformUsers().get("staying@reread-m2.example")?.id]);
    // Invariant 6: the id gone is no entity's any more.
    expect(await h.state.ownersOf("group", [oldId])).toEqual([null]);
  });

  it("a removal refused for good of a user deleted at the source: the dead letter still says which member stays in", async () => {
    h = await startJobsHarness("review-m2-held-deleted-user");
    const leaving = await h.directory.createUser("okta", h.user("leaving@deleted-m2.example"));
    const staying = await h.directory.createUser("okta", h.user("staying@deleted-m2.example"));
    const g = await h.directory.createGroup("okta", h.group("Deleted member"), [
      leaving.resource.id,
      staying.resource.id,
    ]);
    await h.waitForIdle();
    const leavingPid = h.platformUsers().get("leaving@deleted-m2.example")?.id as string;
    const patchGroup = h.platform.patchGroup.bind(h.platform);
    h.platform.patchGroup = async (id, operations) => {
      if (removedIn(operations).some((path) => path.includes(leavingPid))) throw refusal();
      return patchGroup(id, operations);
    };
    // Deleted at the source (onDelete: deactivate): the user is deactivated and forgotten, and the
    // group's sync is to take them out; the platform refuses it for good.
    await h.directory.deleteUser("okta", leaving.resource.id);
    await h.waitForIdle();

    expect(h.platformGroups().get("Deleted member")?.members).toContain(leavingPid);
    const status = await h.state.getStatus({ source: "okta", kind: "group", id: g.resource.id });
    expect(status).toMatchObject({ state: "dead", lastError: { code: "platform_bad_request" } });
    expect(status?.lastError?.message).toMatch(/remove 1 member/);
    // Someone keeps the group's access: the letter must say who, even once the user is forgotten.
    expect(status?.lastError?.message).toMatch(/refused members/);
    // And so does the letter of a retry, made after the user was forgotten.
    const ref: EntityRef = { source: "okta", kind: "group", id: g.resource.id };
    const again = await syncGroup(h.syncContext(), ref, { resync: false }, {}).then(
      () => undefined,
      (e: unknown) => e as { message?: string },
    );
    expect(again?.message).toMatch(/remove 1 member/);
    expect(again?.message).toContain(leavingPid);
  });

  it("a removal refused for good, then the rename refused 409: the letter and an error line still say the member stays in", async () => {
    const lines: string[] = [];
    const { Writable } = await import("node:stream");
    const { createLogger } = await import("../../../src/observability/logger.js");
    const sink = new Writable({
      write(chunk, _enc, done) {
        lines.push(String(chunk));
        done();
      },
    });
    const logger = createLogger("info", {}, sink);
    h = await startJobsHarness("review-m2-held-then-409");
    const leaving = await h.directory.createUser("okta", h.user("leaving@conflict-m2.example"));
    const staying = await h.directory.createUser("okta", h.user("staying@conflict-m2.example"));
    const g = await h.directory.createGroup("okta", h.group("Held 409"), [
      leaving.resource.id,
      staying.resource.id,
    ]);
    await h.waitForIdle();
    // Another group (no source's) holds the new name: the rename answers 409.
    await h.platform.createGroup({
      schemas: ["urn:ietf:params:scim:schemas:core:2.0:Group"],
      displayName: "Taken 409",
      members: [],
    });
    const leavingPid = h.platformUsers().get("leaving@conflict-m2.example")?.id as string;
    const patchGroup = h.platform.patchGroup.bind(h.platform);
    h.platform.patchGroup = async (id, operations) => {
      if (removedIn(operations).some((path) => path.includes(leavingPid))) throw refusal();
      return patchGroup(id, operations);
    };
    await h.stopWorkers();
    await h.directory.replaceGroup("okta", g.resource.id, h.group("Taken 409"), [staying.resource.id]);
    const ref: EntityRef = { source: "okta", kind: "group", id: g.resource.id };
    const err = await syncGroup(h.syncContext({ logger }), ref, { resync: false }, {}).then(
      () => undefined,
      (e: unknown) => e as { code?: string; message?: string },
    );

    expect(err).toMatchObject({ code: "platform_conflict" });
    expect(err?.message).toMatch(/remove 1 member/);
    expect(err?.message).toContain(leaving.resource.id);
    expect(lines.some((line) => line.includes("could not be removed"))).toBe(true);
    for (const line of lines) expect(line).not.toMatch(/@conflict-m2\.example/);
  });
});
