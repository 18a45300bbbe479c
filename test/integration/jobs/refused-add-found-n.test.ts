import { afterEach, describe, expect, it } from "vitest";
import { PlatformError } from "../../../src/platform/platform-error.js";
import { type EntityRef, type PatchOperation, SCHEMA_GROUP } from "../../../src/scim/scim-types.js";
import { syncGroup } from "../../../src/sync/sync-group.js";
import { type JobsHarness, startJobsHarness } from "./jobs-harness.js";

/**
 * Review n: a member whose add the platform refused, then found in the group on the platform (an
 * admin put them in by hand) later in the same sync. The directory says they belong: the bridge
 * never removes them, and their refusal is moot (they are in), so it is no dead letter.
 */

const addedIn = (operations: readonly PatchOperation[]): string[] =>
  operations.flatMap((op) =>
    op.op === "add" && op.path === "members" && Array.isArray(op.value)
      ? (op.value as Array<{ value: string }>).map((m) => m.value)
      : [],
  );
const removedIn = (operations: readonly PatchOperation[]) =>
  operations.flatMap((op) => (op.op === "remove" && op.path ? [op.path] : []));

describe("review n: a refused add found on the platform", () => {
  let h: JobsHarness | undefined;
  afterEach(async () => {
    await h?.close();
    h = undefined;
  });

  it("the group recreated by hand with the refused member in it: adopted, the member is not removed", async () => {
    h = await startJobsHarness("review-n-refused-add-found");
    const staying = await h.directory.createUser("okta", h.user("staying@found-n.example"));
    const refusedOne = await h.directory.createUser("okta", h.user("refused@found-n.example"));
    const g = await h.directory.createGroup("okta", h.group("Found"), [staying.resource.id]);
    await h.waitForIdle();
    await h.stopWorkers();
    const pid = (userName: string) => h!.platformUsers().get(userName)?.id as string;
    const [stayingPid, refusedPid] = [pid("staying@found-n.example"), pid("refused@found-n.example")];
    const groupPid = h.platformGroups().get("Found")?.id as string;

    // The platform refuses (for good) any add naming the member. When the rename comes, an admin
    // has deleted the group and made it again by hand under the new name, with that member in it.
    const patchGroup = h.platform.patchGroup.bind(h.platform);
    const sent: PatchOperation[][] = [];
    h.platform.patchGroup = async (id, operations) => {
      sent.push(operations);
      if (addedIn(operations).includes(refusedPid)) {
        throw new PlatformError("patchGroup: 400", {
          operation: "patchGroup",
          failure: "bad_request",
          transient: false,
          httpStatus: 400,
        });
      }
      if (operations.some((op) => op.path === "displayName")) {
        await h!.platform.deleteGroup(groupPid);
        await h!.platform.createGroup({
          schemas: [SCHEMA_GROUP],
          displayName: "Found renamed",
          members: [{ value: stayingPid }, { value: refusedPid }],
        });
      }
      return patchGroup(id, operations);
    };
    await h.directory.replaceGroup("okta", g.resource.id, h.group("Found renamed"), [
      staying.resource.id,
      refusedOne.resource.id,
    ]);
    const ref: EntityRef = { source: "okta", kind: "group", id: g.resource.id };
    const outcome = await syncGroup(h.syncContext(), ref, { resync: false }, {}).catch((e: unknown) => e);

    // Both belong to the group at the source, and both are in it: nothing was removed.
    expect(sent.flatMap(removedIn)).toEqual([]);
    expect(new Set(h.platformGroups().get("Found renamed")?.members)).toEqual(
      new Set([stayingPid, refusedPid]),
    );
    // Their refusal is moot: no dead letter for a member who is in the group.
    expect(outcome).toMatchObject({ result: "clean" });
  }, 60_000);
});
