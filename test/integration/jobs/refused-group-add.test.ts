import { afterEach, describe, expect, it } from "vitest";
import { narrowingCalls } from "../../../src/mapping/narrow-refusal.js";
import { PlatformError } from "../../../src/platform/platform-error.js";
import { type JobsHarness, startJobsHarness } from "./jobs-harness.js";

/**
 * A group add the platform refuses with 400 (platform-api.yaml: "a member value that is not a
 * platform user id answers 400"). The sync looks each added member up: members that are gone are
 * left out and their users created again; when none is gone, the refusal stands.
 */
describe("a refused group add", () => {
  let h: JobsHarness | undefined;
  afterEach(async () => {
    await h?.close();
    h = undefined;
  });

  it("every added member a platform user: the chunk is not sent again whole, its halves are (review m2), and they land", async () => {
    h = await startJobsHarness("refused-add-stands");
    const a = await h.directory.createUser("okta", h.user("a@refused.example"));
    const b = await h.directory.createUser("okta", h.user("b@refused.example"));
    const g = await h.directory.createGroup("okta", h.group("Refused"), []);
    await h.waitForIdle();
    // The platform refuses the next group PATCH with 400 for a reason of its own (the emulator
    // refuses adds only of members that are no platform users; here every member is one). Refused
    // once only: a second PATCH would be accepted, so a retry of the whole would show.
    const patchGroup = h.platform.patchGroup.bind(h.platform);
    let refusals = 0;
    const sent: string[][] = [];
    h.platform.patchGroup = async (id, operations) => {
      sent.push(
        operations.flatMap((op) =>
          op.op === "add" && Array.isArray(op.value)
            ? (op.value as Array<{ value: string }>).map((m) => m.value)
            : [],
        ),
      );
      if (refusals++ === 0) {
        throw new PlatformError("patchGroup: 400 refused", {
          operation: "patchGroup",
          failure: "bad_request",
          transient: false,
          httpStatus: 400,
        });
      }
      return patchGroup(id, operations);
    };
    await h.directory.replaceGroup("okta", g.resource.id, h.group("Refused"), [a.resource.id, b.resource.id]);
    await h.waitForIdle();

    // Narrowed (review m2): the refused chunk of two is sent again as two halves of one, which
    // land; the whole chunk is never sent again, and nothing is refused in the end.
    const status = await h.state.getStatus({ source: "okta", kind: "group", id: g.resource.id });
    expect(status).toMatchObject({ state: "synced" });
    expect(refusals).toBe(3);
    expect(sent.map((ids) => ids.length)).toEqual([2, 1, 1]);
    expect(h.emulator.count("patchGroup")).toBe(2);
    expect(new Set(h.platformGroups().get("Refused")?.members)).toEqual(
      new Set([
        h.platformUsers().get("a@refused.example")?.id,
        h.platformUsers().get("b@refused.example")?.id,
      ]),
    );
    // Both were looked up, found, and left alone.
    expect(h.emulator.count("getUser")).toBe(2);
    expect(h.emulator.count("createUser")).toBe(2);
  });

  it("every add chunk refused (more of them than the sync's rounds): the rename still lands, one dead letter", async () => {
    h = await startJobsHarness("refused-add-every-chunk");
    const users = [];
    for (let i = 0; i < 5 * 100; i += 50) {
      users.push(
        ...(await Promise.all(
          Array.from({ length: 50 }, (_, j) =>
            h!.directory.createUser("okta", h!.user(`m${i + j}@every.example`)),
          ),
        )),
      );
    }
    const g = await h.directory.createGroup("okta", h.group("Every"), []);
    await h.waitForIdle();
    // The platform refuses every PATCH that adds members (a member limit reached, say).
    const patchGroup = h.platform.patchGroup.bind(h.platform);
    let refusals = 0;
    h.platform.patchGroup = async (id, operations) => {
      if (operations.some((op) => op.op === "add")) {
        refusals++;
        throw new PlatformError("patchGroup: 422 refused", {
          operation: "patchGroup",
          failure: "bad_request",
          transient: false,
          httpStatus: 422,
        });
      }
      return patchGroup(id, operations);
    };
    await h.directory.replaceGroup(
      "okta",
      g.resource.id,
      h.group("Every renamed"),
      users.map((u) => u.resource.id),
    );
    await h.waitForIdle();

    // Five chunks of 100, each refused once; the first is narrowed (review m2) and none of its
    // pieces lands, so the refusal is the group's: the others are not narrowed. The rename is sent
    // after them.
    expect(refusals).toBe(5 + narrowingCalls(100));
    expect(h.platformGroups().get("Every renamed")?.members).toEqual([]);
    const status = await h.state.getStatus({ source: "okta", kind: "group", id: g.resource.id });
    expect(status).toMatchObject({ state: "dead", lastError: { code: "platform_bad_request" } });
    expect(status?.lastError?.message).toMatch(/500 member/);
  }, 60_000);

  it("lets the other members in and creates a member deleted behind the bridge's back again", async () => {
    h = await startJobsHarness("refused-add-vanished");
    const a = await h.directory.createUser("okta", h.user("gone@refused.example"));
    const b = await h.directory.createUser("okta", h.user("stays@refused.example"));
    const g = await h.directory.createGroup("okta", h.group("Mixed"), []);
    await h.waitForIdle();
    const gone = h.platformUsers().get("gone@refused.example")?.id as string;
    const stays = h.platformUsers().get("stays@refused.example")?.id as string;
    // Deleted behind the bridge's back: the bridge still maps the user to this platform id.
    await h.platform.deleteUser(gone);
    await h.directory.replaceGroup("okta", g.resource.id, h.group("Mixed"), [a.resource.id, b.resource.id]);
    await h.waitForIdle();

    const again = h.platformUsers().get("gone@refused.example")?.id;
    expect(again).toBeDefined();
    expect(again).not.toBe(gone);
    expect(new Set(h.platformGroups().get("Mixed")?.members)).toEqual(new Set([stays, again]));
    expect(
      h.emulator.requests().filter((r) => r.operation === "patchGroup" && r.status === 400),
    ).toHaveLength(1);
    expect(await h.state.countDeadLetters()).toBe(0);
    for (const ref of [
      { source: "okta", kind: "group" as const, id: g.resource.id },
      { source: "okta", kind: "user" as const, id: a.resource.id },
    ])
      expect((await h.state.getStatus(ref))?.state).toBe("synced");
  });

  it("creates a new group with the other members when one of them was deleted behind the bridge's back", async () => {
    h = await startJobsHarness("refused-create-vanished");
    const a = await h.directory.createUser("okta", h.user("gone@created.example"));
    const b = await h.directory.createUser("okta", h.user("stays@created.example"));
    await h.waitForIdle();
    const gone = h.platformUsers().get("gone@created.example")?.id as string;
    const stays = h.platformUsers().get("stays@created.example")?.id as string;
    await h.platform.deleteUser(gone);
    const g = await h.directory.createGroup("okta", h.group("Fresh"), [a.resource.id, b.resource.id]);
    await h.waitForIdle();

    const again = h.platformUsers().get("gone@created.example")?.id;
    expect(again).toBeDefined();
    expect(again).not.toBe(gone);
    expect(new Set(h.platformGroups().get("Fresh")?.members)).toEqual(new Set([stays, again]));
    expect(
      h.emulator.requests().filter((r) => r.operation === "createGroup" && r.status === 400),
    ).toHaveLength(1);
    expect(h.emulator.count("createGroup")).toBe(2);
    expect(await h.state.countDeadLetters()).toBe(0);
    expect((await h.state.getStatus({ source: "okta", kind: "group", id: g.resource.id }))?.state).toBe(
      "synced",
    );
  });
});
