import { describe, expect, it } from "vitest";
import { syncDeprovisionsItself } from "../../../jobs/reconcile/deprovision-under-way.js";

const inactive = { state: "present" as const, resource: { active: false } };
const active = { state: "present" as const, resource: { active: true } };
const tombstone = { state: "tombstone" as const };

describe("syncDeprovisionsItself: a dirty user's pending sync deprovisions it by itself", () => {
  it("inactive at the source while the sync last applied it active: the sync deactivates it", () => {
    expect(syncDeprovisionsItself(inactive, "active", "deactivate")).toBe(true);
  });

  it("already deprovisioned by the bridge (the platform turned it on again): drift, the run's own", () => {
    expect(syncDeprovisionsItself(inactive, "inactive", "deactivate")).toBe(false);
    expect(syncDeprovisionsItself(tombstone, "inactive", "deactivate")).toBe(false);
    expect(syncDeprovisionsItself(tombstone, "deleted", "delete")).toBe(false);
  });

  it("no record of a lifecycle (lost sync records): the run's own", () => {
    expect(syncDeprovisionsItself(inactive, undefined, "deactivate")).toBe(false);
    expect(syncDeprovisionsItself(tombstone, undefined, "deactivate")).toBe(false);
  });

  it("deleted at the source: deactivated, or with onDelete delete deleted even when inactive", () => {
    expect(syncDeprovisionsItself(tombstone, "active", "deactivate")).toBe(true);
    expect(syncDeprovisionsItself(tombstone, "active", "delete")).toBe(true);
    expect(syncDeprovisionsItself(tombstone, "inactive", "delete")).toBe(true);
  });

  it("active at the source, or unknown to the directory: no deprovisioning of the sync's", () => {
    expect(syncDeprovisionsItself(active, "active", "deactivate")).toBe(false);
    expect(syncDeprovisionsItself({ state: "unknown" }, "active", "delete")).toBe(false);
  });

  it("a deprovisioning already queued for its bulk call, while the record says nothing of the lifecycle", () => {
    expect(syncDeprovisionsItself(inactive, undefined, "deactivate", "DEACTIVATE")).toBe(true);
    expect(syncDeprovisionsItself(tombstone, undefined, "deactivate", "DEACTIVATE")).toBe(true);
    expect(syncDeprovisionsItself(tombstone, "deleted", "delete", "DELETE")).toBe(true);
    // A reactivation queued is no deprovisioning of the sync's.
    expect(syncDeprovisionsItself(inactive, undefined, "deactivate", "ACTIVATE")).toBe(false);
    expect(syncDeprovisionsItself(active, undefined, "deactivate", "DEACTIVATE")).toBe(false);
  });

  it("a user dirty for the bridge's own reasons, or a directory gone back to an older state (no write of the IdP since the last sync): the run's own", () => {
    expect(syncDeprovisionsItself(inactive, "active", "deactivate", null, false)).toBe(false);
    expect(syncDeprovisionsItself(tombstone, "active", "deactivate", null, false)).toBe(false);
    expect(syncDeprovisionsItself(tombstone, "inactive", "delete", null, false)).toBe(false);
    // A change already queued is on its way whatever the run does.
    expect(syncDeprovisionsItself(inactive, undefined, "deactivate", "DEACTIVATE", false)).toBe(true);
    expect(syncDeprovisionsItself(tombstone, "active", "delete", "DELETE", false)).toBe(true);
  });

  it("with onDelete delete and no record of the user at all, its sync only forgets it: the run's own", () => {
    expect(syncDeprovisionsItself(tombstone, undefined, "delete")).toBe(false);
  });
});
