import { afterEach, describe, expect, it } from "vitest";
import { PlatformError } from "../../../src/platform/platform-error.js";
import type { EntityRef } from "../../../src/scim/scim-types.js";
import { type JobsHarness, startJobsHarness } from "./jobs-harness.js";

/**
 * Review n1: the identity provider takes a member out of the group while the sync narrows a refused
 * add chunk, after that member's piece landed. The change is not lost: the refusal of the desired
 * state the sync read is superseded, the next attempt takes the member out again, and the culprit
 * alone ends as the group's dead letter (the real workers, the strict emulator).
 */

const TENANT = "acme-n1r-idp";

describe("review n1: the group changed at the source in the middle of a narrowing", () => {
  let h: JobsHarness | undefined;
  afterEach(async () => {
    await h?.close();
    h = undefined;
  });

  it("embed group: a member taken out meanwhile ends out of the group; the culprit is the letter", async () => {
    h = await startJobsHarness("review-n1r-idp-change", {
      sources: { portal: { tokens: ["t"], target: { embedTenant: TENANT } } },
    });
    const users = await Promise.all(
      Array.from({ length: 8 }, (_, i) => h!.directory.createUser("portal", h!.user(`idp${i}@n1r.example`))),
    );
    const g = await h.directory.createGroup("portal", h.group("Embed idp"), []);
    await h.waitForIdle(30_000);
    const ids = users.map((u) => u.resource.id);
    const addEmbedGroupMembers = h.platform.addEmbedGroupMembers.bind(h.platform);
    let order: string[] | undefined;
    let leaving: string | undefined;
    h.platform.addEmbedGroupMembers = async (tenant, id, members) => {
      const sent = members.map((u) => u.externalId);
      order ??= sent;
      if (sent.includes(order[0] as string)) {
        throw new PlatformError("addEmbedGroupMembers: 400", {
          operation: "addEmbedGroupMembers",
          failure: "bad_request",
          transient: false,
          httpStatus: 400,
        });
      }
      const answer = await addEmbedGroupMembers(tenant, id, members);
      if (leaving === undefined && sent.length > 1) {
        // A piece of the narrowing landed: the source takes its last member out now.
        leaving = sent.at(-1);
        const left = users.find((u) => u.resource.userName === leaving)!;
        await h!.directory.replaceGroup(
          "portal",
          g.resource.id,
          h!.group("Embed idp"),
          ids.filter((x) => x !== left.resource.id),
        );
      }
      return answer;
    };
    await h.directory.replaceGroup("portal", g.resource.id, h.group("Embed idp"), ids);
    await h.waitForIdle(30_000);

    expect(leaving).toBeDefined();
    const group = h.emulator
      .state()
      .embedTenants.find((t) => t.name === TENANT)
      ?.groups.find((x) => x.name === "Embed idp");
    const wanted = (order ?? []).slice(1).filter((x) => x !== leaving);
    expect(new Set(group?.members)).toEqual(new Set(wanted));
    const ref: EntityRef = { source: "portal", kind: "group", id: g.resource.id };
    const status = await h.state.getStatus(ref);
    expect(status).toMatchObject({ state: "dead", lastError: { code: "platform_bad_request" } });
    expect(status?.lastError?.message).toMatch(/add 1 member\(s\)/);
    const culprit = users.find((u) => u.resource.userName === order?.[0]);
    expect(status?.lastError?.message).toContain(culprit?.resource.id);
  }, 60_000);
});
