/**
 * Review m1: a deleted user's deprovisioning still queued in the lifecycle batch when its source
 * is taken out of the configuration, and an admin then discards its letter (its tombstone released
 * and what is recorded of it forgotten at once: AdminService.releaseTombstone, forgetAbsent). The
 * flusher drops the entry unsent (withoutReleased); it must not mark the user dirty: no sync can
 * run for a source that is not configured, and the sweeper's sync of it brings back the very
 * `unknown_source` letter the admin discarded.
 */
import { afterEach, describe, expect, it } from "vitest";
import { buildConfig } from "../../../src/config/load-config.js";
import type { EntityRef } from "../../../src/scim/scim-types.js";
import { forgetAbsent } from "../../../src/sync/forget-absent.js";
import { type JobsHarness, flushNow, startJobsHarness } from "../jobs/jobs-harness.js";

describe("a released tombstone of a removed source with its deprovisioning queued", () => {
  let h: JobsHarness | undefined;
  afterEach(async () => {
    await h?.close();
    h = undefined;
  });

  it("is dropped unsent and not marked dirty: its discarded letter does not come back", async () => {
    h = await startJobsHarness("review-m1-removed-source-lc", {
      workers: false,
      sources: { okta: { tokens: ["okta-token"] }, other: { tokens: ["other-token"] } },
    });
    const run = h.syncProcessor(h.syncContext());
    const userName = "removed.source.m1@example.com";
    const u = await h.directory.createUser("okta", h.user(userName));
    const ref: EntityRef = { source: "okta", kind: "user", id: u.resource.id };
    expect(await run(ref)).toBe("clean");
    await h.directory.deleteUser("okta", ref.id);
    // Its final DEACTIVATE is queued, not yet flushed.
    expect(await run(ref)).toBe("lifecycle");
    expect(await h.state.countLifecycle()).toBe(1);

    // The source is taken out of the configuration; the admin discards the user's letter.
    const { okta: _removed, ...rest } = h.config.sources;
    const config = buildConfig({
      platform: {
        baseUrl: h.config.platform.baseUrl,
        token: "platform-test-token",
        allowInsecureHttp: true,
      },
      redis: { url: h.config.redis.url, prefix: h.prefix },
      sources: Object.fromEntries(Object.keys(rest).map((id) => [id, { tokens: [`${id}-token`] }])),
    });
    expect(config.sources["okta"]).toBeUndefined();
    const ctx = h.syncContext({ config });
    const snapshot = await h.directory.snapshotUser("okta", ref.id);
    expect(await h.directory.purgeTombstone(ref, snapshot?.generation as number)).toBe(true);
    await forgetAbsent(ctx, ref);
    expect(await h.isDirty(ref)).toBe(false);

    const writes = h.writes();
    // No bulk call went (the flush answers how many it made).
    expect(await flushNow(ctx)).toBe(0);
    expect(h.writes()).toBe(writes);
    expect(h.platformUsers().get(userName)?.["active"]).toBe(true);
    expect(await h.state.countLifecycle()).toBe(0);
    // Nothing brings a sync of it (which would dead-letter it `unknown_source` again).
    expect(await h.isDirty(ref)).toBe(false);
    expect(await h.state.getStatus(ref)).toBeNull();
  });
});
