import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AdminJobs } from "../../../jobs/reconcile/admin-jobs.js";
import type { AdminPrincipal } from "../../../src/admin/admin-principals.js";
import { RedisDirectoryStore } from "../../../src/directory/redis-directory-store.js";
import { matchesFilter } from "../../../src/scim/filter-eval.js";
import { SCHEMA_ENTERPRISE_USER, type ScimUser } from "../../../src/scim/scim-types.js";
import { type JobsHarness, startJobsHarness } from "../jobs/jobs-harness.js";
import { runSettled, startAdminJobsOver } from "./admin-jobs-harness.js";

const admin: AdminPrincipal = { kind: "admin", name: "test-admin", role: "admin" };
const DEPARTMENT = `${SCHEMA_ENTERPRISE_USER}:department`;

describe("reconciliation against the emulator (drift behind the bridge's back)", () => {
  let h: JobsHarness;
  let jobs: AdminJobs;
  const users: string[] = [];
  const groups: string[] = [];

  const platformId = async (id: string) => (await h.state.getUserPlatformIds("okta", [id]))[0] as string;
  const groupPid = async (id: string) =>
    (
      (await h.state.getApplied<{ platformId: string }>({ source: "okta", kind: "group", id })) ?? {
        platformId: "",
      }
    ).platformId;

  beforeAll(async () => {
    h = await startJobsHarness("reconcile-drift", {
      sources: {
        okta: {
          tokens: ["okta-token"],
          attributes: { department: { from: DEPARTMENT, type: "string" } },
        },
      },
    });
    jobs = await startAdminJobsOver(h);
    for (let i = 0; i < 10; i++) {
      // Every attribute the platform keeps, so that a converged user compares equal field by field.
      const user: Omit<ScimUser, "id"> = {
        ...h.user(`user${i}@example.com`),
        externalId: `ext-${i}`,
        displayName: `User ${i}`,
        name: { givenName: "Ada", familyName: `Number${i}` },
        emails: [
          { value: `user${i}@example.com`, type: "work", primary: true },
          { value: `home${i}@example.org`, type: "home" },
        ],
        [SCHEMA_ENTERPRISE_USER]: { department: "R&D", costCenter: "42", employeeNumber: `E${i}` },
      };
      users.push((await h.directory.createUser("okta", user)).resource.id);
    }
    groups.push((await h.directory.createGroup("okta", h.group("Eng"), users.slice(0, 3))).resource.id);
    groups.push((await h.directory.createGroup("okta", h.group("Ops"), users.slice(3, 5))).resource.id);
    await h.directory.updateUser("okta", users[0]!, (c) => ({ ...c.resource, active: false }));
    await h.waitForIdle();
  }, 30_000);

  afterAll(async () => {
    await jobs?.close();
    await h?.close();
  });

  it("finds nothing to repair on a converged source", async () => {
    const run = await runSettled(jobs, (await jobs.service.triggerReconcile("okta", true, admin)).runId);
    expect(run.state).toBe("succeeded");
    expect(run.counts).toEqual({
      missing: 0,
      changed: 0,
      activeMismatch: 0,
      membership: 0,
      attributeValues: 0,
      deletedBehind: 0,
      orphans: 0,
    });
  });

  it("reports injected drift in a dry run without changing anything, then repairs it", async () => {
    const department = h.emulator.state().attributes.find((a) => a.name === "department");
    expect(department).toBeDefined();
    h.emulator.drift({ action: "setUserActive", userId: await platformId(users[0]!), active: true });
    h.emulator.drift({
      action: "removeGroupMember",
      groupId: await groupPid(groups[0]!),
      userId: await platformId(users[1]!),
    });
    h.emulator.drift({
      action: "setAttributeValue",
      userId: await platformId(users[2]!),
      attributeId: department!.id,
      value: "Sales",
    });
    h.emulator.drift({ action: "deleteGroup", groupId: await groupPid(groups[1]!) });
    const orphanId = h.emulator.drift({
      action: "addOrphanUser",
      user: { userName: "stranger@example.com" },
    });
    // A profile attribute changed through the platform's own API, behind the bridge's back.
    await h.platform.patchUser(await platformId(users[3]!), [
      { op: "replace", path: "displayName", value: "Eve" },
    ]);

    const writesBefore = h.writes();
    const dry = await runSettled(jobs, (await jobs.service.triggerReconcile("okta", true, admin)).runId);
    expect(h.writes()).toBe(writesBefore);
    const expected = {
      missing: 0,
      changed: 1,
      activeMismatch: 1,
      membership: 1,
      attributeValues: 1,
      deletedBehind: 1,
      orphans: 1,
    };
    expect(dry).toMatchObject({ state: "succeeded", dryRun: true, counts: expected });
    expect(dry.samples.activeMismatch[0]).toMatchObject({ kind: "user", id: users[0] });
    expect(dry.samples.deletedBehind[0]).toMatchObject({ kind: "group", id: groups[1] });
    expect(dry.samples.orphans[0]).toMatchObject({ platformId: orphanId });
    expect(dry.guard).toMatchObject({ plannedDeprovisions: 1, ownedUsers: 10, tripped: false });
    expect(dry.repairs.applied).toBe(false);

    const run = await runSettled(jobs, (await jobs.service.triggerReconcile("okta", false, admin)).runId);
    expect(run).toMatchObject({ state: "succeeded", dryRun: false, counts: expected });
    expect(run.repairs).toMatchObject({ entities: 5, orphanDeactivations: 0, applied: true });
    await h.waitForIdle();

    const platform = h.emulator.state();
    expect(platform.users.find((u) => u.userName === "user0@example.com")?.active).toBe(false);
    expect(platform.users.find((u) => u.userName === "user3@example.com")?.displayName).toBe("User 3");
    const eng = platform.groups.find((g) => g.displayName === "Eng");
    expect(eng?.members).toContain(await platformId(users[1]!));
    expect(platform.groups.some((g) => g.displayName === "Ops")).toBe(true);
    const user2 = await platformId(users[2]!);
    const value = platform.attributeValues.find((v) => v.userId === user2 && v.name === "department");
    expect(value?.value).toBe("R&D");
    expect(platform.users.find((u) => u.id === orphanId)?.active).not.toBe(false); // report policy

    const after = await runSettled(jobs, (await jobs.service.triggerReconcile("okta", true, admin)).runId);
    expect(after.counts).toEqual({
      ...expected,
      changed: 0,
      activeMismatch: 0,
      membership: 0,
      attributeValues: 0,
      deletedBehind: 0,
    });
  });

  it("finds a user that never reached the platform (missing) and creates it", async () => {
    // Written without a sync and marked clean: as if its jobs were lost.
    const quiet = new RedisDirectoryStore({
      redis: h.storeRedis,
      prefix: h.prefix,
      notify: async () => {},
      matchesFilter,
    });
    const lost = await quiet.createUser("okta", h.user("lost@example.com"));
    await quiet.markClean({ source: "okta", kind: "user", id: lost.resource.id }, lost.generation);
    const dry = await runSettled(jobs, (await jobs.service.triggerReconcile("okta", true, admin)).runId);
    expect(dry.counts.missing).toBe(1);
    expect(dry.samples.missing[0]).toMatchObject({ kind: "user", id: lost.resource.id });
    expect(h.platformUsers().has("lost@example.com")).toBe(false);
    await runSettled(jobs, (await jobs.service.triggerReconcile("okta", false, admin)).runId);
    await h.waitForIdle();
    expect(h.platformUsers().has("lost@example.com")).toBe(true);
  });
});
