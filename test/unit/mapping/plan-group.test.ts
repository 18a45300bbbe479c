import { describe, expect, it } from "vitest";
import { planGroup } from "../../../src/mapping/plan-group.js";
import { planEmbedGroup, resolveEmbedTenant } from "../../../src/mapping/plan-embed-group.js";

const ids = (n: number, from = 0) => Array.from({ length: n }, (_, i) => `p${i + from}`);

describe("planGroup (workspace)", () => {
  it("creates a group with its first 100 members, then adds the rest by PATCH", () => {
    const first = planGroup({ desiredName: "Eng", desiredMembers: ids(150), applied: null });
    expect(first.steps).toEqual([{ type: "createGroup", displayName: "Eng", members: ids(100) }]);
    const next = planGroup({
      desiredName: "Eng",
      desiredMembers: ids(150),
      applied: { platformId: "g1", displayName: "Eng", members: ids(100) },
    });
    expect(next.steps).toEqual([
      {
        type: "patchGroup",
        operations: [{ op: "add", path: "members", value: ids(50, 100).map((value) => ({ value })) }],
      },
    ]);
  });

  it("plans nothing for a converged group", () => {
    const plan = planGroup({
      desiredName: "Eng",
      desiredMembers: ["b", "a"],
      applied: { platformId: "g1", displayName: "Eng", members: ["a", "b"] },
    });
    expect(plan.steps).toEqual([]);
  });

  it("renames and diffs membership in chunks of at most 100, never replacing the list", () => {
    const plan = planGroup({
      desiredName: "Engineering",
      desiredMembers: ids(250, 1000),
      applied: { platformId: "g1", displayName: "Eng", members: ids(120) },
    });
    const ops = plan.steps.flatMap((s) => (s.type === "patchGroup" ? s.operations : []));
    expect(ops.some((o) => o.op === "replace" && o.path === "members")).toBe(false);
    // Removals (120: 100 + 20), then additions (250: 100 + 100 + 50), then the rename on its own.
    expect(
      plan.steps.map((s) =>
        s.type === "patchGroup"
          ? `${s.operations[0]?.op}:${
              s.operations[0]?.op === "add" && Array.isArray(s.operations[0].value)
                ? s.operations[0].value.length
                : s.operations.length
            }`
          : s.type,
      ),
    ).toEqual(["remove:100", "remove:20", "add:100", "add:100", "add:50", "replace:1"]);
    expect(plan.steps.at(-1)).toEqual({
      type: "patchGroup",
      operations: [{ op: "replace", path: "displayName", value: "Engineering" }],
    });
    for (const step of plan.steps) {
      if (step.type !== "patchGroup") throw new Error("unexpected step");
      const members = step.operations.reduce(
        (n, o) =>
          n + (o.path === "members" && Array.isArray(o.value) ? o.value.length : o.op === "remove" ? 1 : 0),
        0,
      );
      expect(members).toBeLessThanOrEqual(100);
    }
    const added = ops.flatMap((o) => (o.op === "add" && Array.isArray(o.value) ? o.value : []));
    const removed = ops.filter((o) => o.op === "remove");
    expect(added).toHaveLength(250);
    expect(removed).toHaveLength(120);
    expect(removed[0]).toEqual({ op: "remove", path: 'members[value eq "p0"]' });
  });

  it("sends removals, then additions, then the rename in a PATCH of its own", () => {
    // A rename the platform refuses (409: another source's group holds the name) must not take
    // the membership changes down with it, so it never shares a PATCH with them.
    const plan = planGroup({
      desiredName: "Taken",
      desiredMembers: ["a", "c"],
      applied: { platformId: "g1", displayName: "Mine", members: ["a", "b"] },
    });
    expect(plan.steps).toEqual([
      { type: "patchGroup", operations: [{ op: "remove", path: 'members[value eq "b"]' }] },
      { type: "patchGroup", operations: [{ op: "add", path: "members", value: [{ value: "c" }] }] },
      { type: "patchGroup", operations: [{ op: "replace", path: "displayName", value: "Taken" }] },
    ]);
    // A rename alone is one PATCH.
    expect(
      planGroup({
        desiredName: "Taken",
        desiredMembers: ["a"],
        applied: { platformId: "g1", displayName: "Mine", members: ["a"] },
      }).steps,
    ).toEqual([{ type: "patchGroup", operations: [{ op: "replace", path: "displayName", value: "Taken" }] }]);
  });

  it("deletes a deleted group without touching members, then forgets it", () => {
    expect(
      planGroup({ desiredName: null, desiredMembers: [], applied: { platformId: "g1", members: ["a"] } })
        .steps,
    ).toEqual([{ type: "deleteGroup" }]);
    expect(planGroup({ desiredName: null, desiredMembers: [], applied: null }).steps).toEqual([
      { type: "forget" },
    ]);
    expect(
      planGroup({
        desiredName: null,
        desiredMembers: [],
        applied: { pendingDisplayName: "Eng", members: [] },
      }).steps,
    ).toEqual([{ type: "findLostGroup", displayName: "Eng" }]);
  });
});

describe("embed groups", () => {
  it("resolves the tenant from a fixed name or a pattern", () => {
    expect(resolveEmbedTenant({ embedTenant: "acme" }, "Anything")).toBe("acme");
    const target = { embedTenantFromGroup: { pattern: "^tenant-([A-Za-z0-9-]+)-" } };
    expect(resolveEmbedTenant(target, "tenant-Globex-viewers")).toBe("globex");
    expect(resolveEmbedTenant(target, "staff")).toBeNull();
  });

  const u = (externalId: string) => ({ externalId });

  it("creates, renames and diffs members by externalId", () => {
    expect(
      planEmbedGroup({
        desired: { tenant: "acme", name: "Viewers" },
        desiredMembers: [u("a")],
        applied: null,
      }).steps,
    ).toEqual([{ type: "createEmbedGroup", tenant: "acme", name: "Viewers" }]);
    const plan = planEmbedGroup({
      desired: { tenant: "acme", name: "Readers" },
      desiredMembers: [u("a"), u("c")],
      applied: { platformId: "e1", tenant: "acme", name: "Viewers", members: ["a", "b"] },
    });
    // Removals, then additions, then the rename: a refused rename must not hold back membership.
    expect(plan.steps).toEqual([
      { type: "removeEmbedMembers", externalIds: ["b"] },
      { type: "addEmbedMembers", users: [u("c")] },
      { type: "renameEmbedGroup", name: "Readers" },
    ]);
  });

  it("plans nothing when converged, and deletes on tenant change or deletion", () => {
    const applied = { platformId: "e1", tenant: "acme", name: "V", members: ["a"] };
    expect(
      planEmbedGroup({ desired: { tenant: "acme", name: "V" }, desiredMembers: [u("a")], applied }).steps,
    ).toEqual([]);
    expect(
      planEmbedGroup({ desired: { tenant: "other", name: "V" }, desiredMembers: [u("a")], applied }).steps,
    ).toEqual([{ type: "deleteEmbedGroup" }]);
    expect(planEmbedGroup({ desired: null, desiredMembers: [], applied }).steps).toEqual([
      { type: "deleteEmbedGroup" },
    ]);
    expect(planEmbedGroup({ desired: null, desiredMembers: [], applied: null }).steps).toEqual([
      { type: "forget" },
    ]);
  });

  it("sends a present member again when its email or displayName differs from what it was sent with", () => {
    const applied = {
      platformId: "e1",
      tenant: "acme",
      name: "V",
      members: ["a", "b", "c", "d"],
      profiles: [
        { externalId: "a", email: "a@old.example", displayName: "A" },
        { externalId: "b", email: "b@example.com", displayName: "B old" },
        { externalId: "c", email: "c@example.com" },
      ],
    };
    const a = { externalId: "a", email: "a@new.example", displayName: "A" };
    const b = { externalId: "b", email: "b@example.com", displayName: "B new" };
    // c: no displayName at the source any more (the contract has no way to clear one: nothing to send);
    // d: nothing recorded of what it was sent with (a record from before): trusted as it is.
    const c = { externalId: "c" };
    const d = { externalId: "d", email: "d@example.com" };
    expect(
      planEmbedGroup({ desired: { tenant: "acme", name: "V" }, desiredMembers: [a, b, c, d], applied }).steps,
    ).toEqual([{ type: "addEmbedMembers", users: [a, b] }]);
    expect(
      planEmbedGroup({
        desired: { tenant: "acme", name: "V" },
        desiredMembers: [{ externalId: "a", email: "a@old.example", displayName: "A" }, c, d],
        applied,
      }).steps,
    ).toEqual([{ type: "removeEmbedMembers", externalIds: ["b"] }]);
  });

  it("chunks member additions by 100", () => {
    const members = Array.from({ length: 230 }, (_, i) => u(`x${i}`));
    const plan = planEmbedGroup({
      desired: { tenant: "acme", name: "V" },
      desiredMembers: members,
      applied: { platformId: "e1", tenant: "acme", name: "V", members: [] },
    });
    expect(plan.steps.map((s) => (s.type === "addEmbedMembers" ? s.users.length : 0))).toEqual([
      100, 100, 30,
    ]);
  });

  it("chunks removals by 100 and sends them before additions and the rename", () => {
    const gone = Array.from({ length: 130 }, (_, i) => `old${i}`);
    const plan = planEmbedGroup({
      desired: { tenant: "acme", name: "W" },
      desiredMembers: Array.from({ length: 120 }, (_, i) => u(`new${i}`)),
      applied: { platformId: "e1", tenant: "acme", name: "V", members: gone },
    });
    expect(
      plan.steps.map((s) =>
        s.type === "removeEmbedMembers"
          ? `remove:${s.externalIds.length}`
          : s.type === "addEmbedMembers"
            ? `add:${s.users.length}`
            : s.type,
      ),
    ).toEqual(["remove:100", "remove:30", "add:100", "add:20", "renameEmbedGroup"]);
  });
});
