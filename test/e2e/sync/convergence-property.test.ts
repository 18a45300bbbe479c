import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { FaultRule } from "../../../src/platform/emulator/fault-injector.js";
import type { EntityRef } from "../../../src/scim/scim-types.js";
import { type JobsHarness, startJobsHarness } from "../../integration/jobs/jobs-harness.js";

const ENT = "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User";
const USERS = 6;
const GROUPS = 3;

type Command =
  | { t: "createUser"; i: number; active: boolean; dept: string | null }
  | { t: "updateUser"; i: number; displayName: string; dept: string | null }
  | { t: "setActive"; i: number; active: boolean }
  | { t: "deleteUser"; i: number }
  | { t: "createGroup"; g: number; members: number[] }
  | { t: "addMember"; g: number; i: number }
  | { t: "removeMember"; g: number; i: number }
  | { t: "renameGroup"; g: number }
  | { t: "deleteGroup"; g: number }
  | { t: "duplicate"; pick: number }
  | { t: "pause"; ms: number };

const user = fc.integer({ min: 0, max: USERS - 1 });
const grp = fc.integer({ min: 0, max: GROUPS - 1 });
const dept = fc.option(fc.constantFrom("R&D", "Ops", "Sales"), { nil: null });
const command: fc.Arbitrary<Command> = fc.oneof(
  {
    arbitrary: fc.record({ t: fc.constant("createUser" as const), i: user, active: fc.boolean(), dept }),
    weight: 4,
  },
  {
    arbitrary: fc.record({
      t: fc.constant("updateUser" as const),
      i: user,
      displayName: fc.constantFrom("A", "B", "C"),
      dept,
    }),
    weight: 3,
  },
  {
    arbitrary: fc.record({ t: fc.constant("setActive" as const), i: user, active: fc.boolean() }),
    weight: 3,
  },
  { arbitrary: fc.record({ t: fc.constant("deleteUser" as const), i: user }), weight: 1 },
  {
    arbitrary: fc.record({
      t: fc.constant("createGroup" as const),
      g: grp,
      members: fc.uniqueArray(user, { maxLength: USERS }),
    }),
    weight: 2,
  },
  { arbitrary: fc.record({ t: fc.constant("addMember" as const), g: grp, i: user }), weight: 3 },
  { arbitrary: fc.record({ t: fc.constant("removeMember" as const), g: grp, i: user }), weight: 2 },
  { arbitrary: fc.record({ t: fc.constant("renameGroup" as const), g: grp }), weight: 1 },
  { arbitrary: fc.record({ t: fc.constant("deleteGroup" as const), g: grp }), weight: 1 },
  { arbitrary: fc.record({ t: fc.constant("duplicate" as const), pick: fc.nat() }), weight: 2 },
  {
    arbitrary: fc.record({ t: fc.constant("pause" as const), ms: fc.integer({ min: 0, max: 30 }) }),
    weight: 2,
  },
);

const FAULTS: FaultRule[] = [
  { type: "error", status: 500, probability: 0.05 },
  { type: "error", status: 503, probability: 0.02 },
  { type: "error", status: 429, retryAfterSeconds: 0, probability: 0.04 },
  {
    type: "error",
    status: 429,
    retryAfterSeconds: 1,
    count: 1,
    match: { operation: "bulkUsers" },
  },
  { type: "drop", probability: 0.03 },
  { type: "ghost", probability: 0.06, match: { method: "POST" } },
  { type: "ghost", probability: 0.04, match: { method: "PATCH" } },
];

/** Invariant 2 (convergence, no lost update) under random changes, duplicates, reorders and platform faults. */
describe("convergence under random changes and platform faults (property)", () => {
  it("after the queues drain, the platform holds exactly the mapped desired state", async () => {
    let run = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(command, { minLength: 5, maxLength: 30 }),
        fc.integer(),
        fc.constantFrom("deactivate" as const, "delete" as const),
        async (commands, seed, onDelete) => {
          const h = await startJobsHarness(`prop${run++}`, {
            seed,
            sources: {
              okta: {
                tokens: ["t"],
                groupPrefix: "p-",
                onDelete,
                attributes: { department: { from: `${ENT}:department`, type: "string" } },
              },
            },
            faults: FAULTS,
          });
          try {
            await applyCommands(h, commands);
            await h.waitForIdle(20_000);
            await expectConverged(h, onDelete);
          } finally {
            await h.close();
          }
        },
      ),
      { numRuns: Number(process.env.PROPERTY_RUNS ?? 12), endOnFailure: true },
    );
  }, 90_000);

  it("an embed-tenant source converges to embed groups of its active members", async () => {
    let run = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(command, { minLength: 5, maxLength: 30 }),
        fc.integer(),
        async (commands, seed) => {
          const h = await startJobsHarness(`prop-embed${run++}`, {
            seed,
            sources: { okta: { tokens: ["t"], groupPrefix: "p-", target: { embedTenant: "acme" } } },
            faults: FAULTS,
          });
          try {
            await applyCommands(h, commands);
            await h.waitForIdle(20_000);
            await expectEmbedConverged(h);
          } finally {
            await h.close();
          }
        },
      ),
      { numRuns: Number(process.env.PROPERTY_RUNS ?? 6), endOnFailure: true },
    );
  }, 90_000);
});

async function expectEmbedConverged(h: JobsHarness): Promise<void> {
  const live = await h.directory.listUsers("okta", { startIndex: 1, count: 1_000 });
  const liveGroups = await h.directory.listGroups("okta", { startIndex: 1, count: 1_000, withMembers: true });
  const state = h.emulator.state();
  expect(state.users, "embed-source users never become workspace users").toHaveLength(0);
  const activeExternalId = new Map(
    live.items.filter((u) => u.resource.active).map((u) => [u.resource.id, u.resource.userName]),
  );
  const groups = state.embedTenants.find((t) => t.name === "acme")?.groups ?? [];
  expect(groups.map((g) => g.name).sort()).toEqual(
    liveGroups.items.map((g) => `p-${g.resource.displayName}`).sort(),
  );
  for (const g of liveGroups.items) {
    const want = (g.members ?? []).flatMap((m) => {
      const ext = activeExternalId.get(m.value);
      return ext ? [ext] : [];
    });
    const got = groups.find((x) => x.name === `p-${g.resource.displayName}`)?.members ?? [];
    expect(got.slice().sort(), g.resource.displayName).toEqual(want.sort());
  }
  expect(h.emulator.violations()).toEqual([]);
  expect(await h.state.countDeadLetters()).toBe(0);
}

async function applyCommands(h: JobsHarness, commands: Command[]): Promise<void> {
  const d = h.directory;
  const users = new Map<number, string>();
  const groups = new Map<number, { id: string; version: number }>();
  const refs: EntityRef[] = [];
  for (const c of commands) {
    switch (c.t) {
      case "createUser": {
        if (users.has(c.i)) break;
        const rec = await d.createUser(
          "okta",
          h.user(`User${c.i}@Example.com`, {
            active: c.active,
            ...(c.dept ? { [ENT]: { department: c.dept } } : {}),
          }),
        );
        users.set(c.i, rec.resource.id);
        refs.push({ source: "okta", kind: "user", id: rec.resource.id });
        break;
      }
      case "updateUser": {
        const id = users.get(c.i);
        if (!id) break;
        await d.updateUser("okta", id, (cur) => {
          const { [ENT]: _ent, ...rest } = cur.resource;
          return {
            ...rest,
            displayName: c.displayName,
            ...(c.dept ? { [ENT]: { department: c.dept } } : {}),
          };
        });
        break;
      }
      case "setActive": {
        const id = users.get(c.i);
        if (id) await d.updateUser("okta", id, (cur) => ({ ...cur.resource, active: c.active }));
        break;
      }
      case "deleteUser": {
        const id = users.get(c.i);
        if (!id) break;
        await d.deleteUser("okta", id);
        users.delete(c.i);
        break;
      }
      case "createGroup": {
        if (groups.has(c.g)) break;
        const members = c.members.flatMap((i) => (users.has(i) ? [users.get(i) as string] : []));
        const rec = await d.createGroup("okta", h.group(`g${c.g}`), members);
        groups.set(c.g, { id: rec.resource.id, version: 0 });
        refs.push({ source: "okta", kind: "group", id: rec.resource.id });
        break;
      }
      case "addMember":
      case "removeMember": {
        const g = groups.get(c.g);
        const id = users.get(c.i);
        if (!g || !id) break;
        await d.updateGroup("okta", g.id, (cur) => ({
          resource: cur.resource,
          members: c.t === "addMember" ? { add: [id] } : { remove: [id] },
        }));
        break;
      }
      case "renameGroup": {
        const g = groups.get(c.g);
        if (!g) break;
        g.version++;
        await d.updateGroup("okta", g.id, (cur) => ({
          resource: { ...cur.resource, displayName: `g${c.g}-v${g.version}` },
        }));
        break;
      }
      case "deleteGroup": {
        const g = groups.get(c.g);
        if (!g) break;
        await d.deleteGroup("okta", g.id);
        groups.delete(c.g);
        break;
      }
      case "duplicate": {
        // A duplicate delivery of an old reference (possibly of a deleted entity).
        const ref = refs[c.pick % Math.max(1, refs.length)];
        if (ref) await h.syncQueue.notify([ref, ref]);
        break;
      }
      case "pause":
        await new Promise((r) => setTimeout(r, c.ms));
        break;
    }
  }
}

async function expectConverged(h: JobsHarness, onDelete: "deactivate" | "delete"): Promise<void> {
  const live = await h.directory.listUsers("okta", { startIndex: 1, count: 1_000 });
  const liveGroups = await h.directory.listGroups("okta", { startIndex: 1, count: 1_000, withMembers: true });
  const state = h.emulator.state();
  const platformByName = new Map(state.users.map((u) => [String(u["userName"]).toLowerCase(), u]));
  expect(platformByName.size, "no duplicate platform users").toBe(state.users.length);
  const liveNames = new Set<string>();
  const idToPlatform = new Map<string, string>();
  for (const rec of live.items) {
    const name = rec.resource.userName.toLowerCase();
    liveNames.add(name);
    const p = platformByName.get(name);
    expect(p, `platform user ${name}`).toBeDefined();
    if (!p) continue;
    idToPlatform.set(rec.resource.id, String(p.id));
    expect(p.active, `${name} active`).toBe(rec.resource.active);
    expect(p["displayName"], `${name} displayName`).toBe(rec.resource["displayName"]);
    const ent = rec.resource[ENT] as { department?: string } | undefined;
    const values = state.attributeValues.filter((v) => v.userId === p.id && v.name === "department");
    expect(values[0]?.value ?? null, `${name} department`).toBe(ent?.department ?? null);
  }
  // Users deleted at the source are deprovisioned by the onDelete policy, never left active.
  for (const p of state.users) {
    if (liveNames.has(String(p["userName"]).toLowerCase())) continue;
    expect(onDelete, `${p["userName"]} should have been deleted`).toBe("deactivate");
    expect(p.active, `${p["userName"]} deprovisioned`).toBe(false);
  }
  const platformGroups = new Map(state.groups.map((g) => [g.displayName, g]));
  expect([...platformGroups.keys()].sort()).toEqual(
    liveGroups.items.map((g) => `p-${g.resource.displayName}`).sort(),
  );
  for (const g of liveGroups.items) {
    const want = (g.members ?? []).map((m) => idToPlatform.get(m.value)).sort();
    expect(
      platformGroups.get(`p-${g.resource.displayName}`)?.members.slice().sort(),
      g.resource.displayName,
    ).toEqual(want);
  }
  expect(h.emulator.violations()).toEqual([]);
  expect(await h.state.countDeadLetters()).toBe(0);
}
