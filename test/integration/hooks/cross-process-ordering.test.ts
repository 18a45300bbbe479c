/**
 * Ordering across processes: the bridge may run several processes (start --processes N) and
 * several api pods, so two deliveries about one user can be applied at the same time by hook
 * services that share nothing but Redis. The decision "is this event older than the user's last
 * change" and the write must be one atomic step: an older event never overwrites a newer one, and
 * a newer one is never taken for stale because an older one was written at the same moment.
 *
 * Two OktaHookService instances, each with its own Redis connection, directory store and state
 * store (as two processes have), get an older and a newer event of one user at the same time.
 */
import { Registry } from "prom-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RedisDirectoryStore } from "../../../src/directory/redis-directory-store.js";
import { HookMetrics } from "../../../src/hooks/hook-metrics.js";
import { HookStateStore } from "../../../src/hooks/hook-state-store.js";
import { parseOktaDelivery } from "../../../src/hooks/okta-event.js";
import { type OktaDeliverySummary, OktaHookService } from "../../../src/hooks/okta-hook-service.js";
import { type OktaFixture, oktaDelivery, oktaEvent } from "../../fixtures/hooks/okta-delivery.js";
import { createRecordingDirectory } from "../../helpers/recording-directory.js";
import { deleteKeys, testPrefix } from "../../helpers/redis-test-prefix.js";

const SOURCE = "okta";
const ROUNDS = 50;

interface Process {
  service: OktaHookService;
  directory: RedisDirectoryStore;
  close(): Promise<void>;
}

const prefix = testPrefix("hooks-cross-process");
let a: Process;
let b: Process;

async function startProcess(): Promise<Process> {
  const { redis, directory, logger } = await createRecordingDirectory(prefix);
  const state = new HookStateStore(redis, prefix);
  const metrics = new HookMetrics(new Registry());
  const service = new OktaHookService({ directory, state, metrics, logger });
  return { service, directory, close: async () => void (await redis.quit()) };
}

beforeAll(async () => {
  a = await startProcess();
  b = await startProcess();
});
afterAll(async () => {
  const { redis } = await createRecordingDirectory(prefix);
  await deleteKeys(redis, prefix);
  await redis.quit();
  await a?.close();
  await b?.close();
});

type OktaUser = { id: string; alternateId: string; displayName: string };
let n = 0;
function newOktaUser(tag: string): OktaUser {
  n++;
  return {
    id: `00u${tag}${n}x${Date.now().toString(36)}`,
    alternateId: `${tag}${n}.${Date.now()}@example.com`,
    displayName: `Start ${n}`,
  };
}

function actions(
  name: OktaFixture,
  user: OktaUser,
  published: number,
  group?: { id: string; displayName: string },
) {
  return parseOktaDelivery(oktaDelivery([oktaEvent(name, { user, published, group })]));
}

/** Whether `user` is a member of the Okta group `oktaGroupId` in the directory. */
async function isMember(user: OktaUser, oktaGroupId: string): Promise<boolean | "no group"> {
  const groupId = await a.directory.findGroupId(SOURCE, { externalId: oktaGroupId });
  const group = groupId ? await a.directory.getGroup(SOURCE, groupId, { withMembers: true }) : null;
  if (!group) return "no group";
  const userId = await a.directory.findUserId(SOURCE, { externalId: user.id });
  return (group.members ?? []).some((m) => m.value === userId);
}

async function stored(user: OktaUser) {
  const id = await a.directory.findUserId(SOURCE, { externalId: user.id });
  return id ? a.directory.getUser(SOURCE, id) : null;
}

/**
 * Delivers `older` to one process and `newer` to the other at the same time; returns the summaries
 * of `older` and `newer`, in that order.
 */
async function race(
  older: ReturnType<typeof actions>,
  newer: ReturnType<typeof actions>,
  round: number,
): Promise<[OktaDeliverySummary, OktaDeliverySummary]> {
  const [first, second] = round % 2 === 0 ? [a, b] : [b, a];
  const newerFirst = round % 4 >= 2;
  const results: [OktaDeliverySummary, OktaDeliverySummary] = newerFirst
    ? await Promise.all([
        first.service.handleDelivery(SOURCE, newer),
        second.service.handleDelivery(SOURCE, older),
      ]).then(([n, o]) => [o, n])
    : await Promise.all([
        first.service.handleDelivery(SOURCE, older),
        second.service.handleDelivery(SOURCE, newer),
      ]);
  for (const r of results) expect(r.outcomes.rejected, JSON.stringify(r)).toBeUndefined();
  return results;
}

describe("Okta events about one user applied by two processes at the same time", () => {
  it(`a profile update: the newer one always wins (${ROUNDS} rounds, both orders of arrival)`, async () => {
    const failures: string[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const user = newOktaUser("p");
      const t0 = Date.now() - 60_000;
      await a.service.handleDelivery(SOURCE, actions("user-lifecycle-create", user, t0));
      const older = actions("user-account-update-profile", { ...user, displayName: "Older" }, t0 + 1_000);
      const newer = actions("user-account-update-profile", { ...user, displayName: "Newer" }, t0 + 2_000);
      await race(older, newer, round);
      const name = (await stored(user))?.resource.displayName;
      if (name !== "Newer") failures.push(`round ${round}: ${name}`);
    }
    expect(failures).toEqual([]);
  });

  it(`a deactivation and an activation: the newer one always wins (${ROUNDS} rounds, both orders)`, async () => {
    const failures: string[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const user = newOktaUser("l");
      const t0 = Date.now() - 60_000;
      await a.service.handleDelivery(SOURCE, actions("user-lifecycle-create", user, t0));
      // Alternate which state is the newer one, so that "unchanged" events race with writes too.
      const newerActive = round % 8 < 4;
      const older = actions(
        newerActive ? "user-lifecycle-deactivate" : "user-lifecycle-activate",
        user,
        t0 + 1_000,
      );
      const newer = actions(
        newerActive ? "user-lifecycle-activate" : "user-lifecycle-deactivate",
        user,
        t0 + 2_000,
      );
      await race(older, newer, round);
      const active = (await stored(user))?.resource.active;
      if (active !== newerActive) failures.push(`round ${round}: active ${active}, want ${newerActive}`);
    }
    expect(failures).toEqual([]);
  });

  it(`a user not yet known: a create and a newer profile update (${ROUNDS} rounds, both orders)`, async () => {
    // A profile update of a user the bridge does not hold creates nothing and is not remembered
    // ("unknown_user"). Once it applies to the created user, the create never overwrites it.
    const failures: string[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const user = newOktaUser("c");
      const t0 = Date.now() - 60_000;
      const older = actions("user-lifecycle-create", { ...user, displayName: "Older" }, t0 + 1_000);
      const newer = actions("user-account-update-profile", { ...user, displayName: "Newer" }, t0 + 2_000);
      const [created, profiled] = await race(older, newer, round);
      const name = (await stored(user))?.resource.displayName;
      const want = profiled.outcomes.unknown_user === 1 ? "Older" : "Newer";
      if (created.outcomes.applied !== 1) failures.push(`round ${round}: create ${JSON.stringify(created)}`);
      if (name !== want) failures.push(`round ${round}: ${name}, profile ${JSON.stringify(profiled)}`);
    }
    expect(failures).toEqual([]);
  });

  it(`a user not yet known: a deactivation and an older create: it is created inactive (${ROUNDS} rounds, both orders)`, async () => {
    const failures: string[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const user = newOktaUser("u");
      const t0 = Date.now() - 60_000;
      const older = actions("user-lifecycle-create", user, t0 + 1_000);
      const newer = actions("user-lifecycle-deactivate", user, t0 + 2_000);
      await race(older, newer, round);
      const record = await stored(user);
      if (record?.resource.active !== false)
        failures.push(`round ${round}: active ${record?.resource.active}`);
    }
    expect(failures).toEqual([]);
  });

  it(`a delete and an older activation of a known user: it stays deleted (${ROUNDS} rounds, both orders)`, async () => {
    const failures: string[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const user = newOktaUser("d");
      const t0 = Date.now() - 60_000;
      await a.service.handleDelivery(SOURCE, actions("user-lifecycle-create", user, t0));
      const older = actions("user-lifecycle-activate", user, t0 + 1_000);
      const newer = actions("user-lifecycle-delete-initiated", user, t0 + 2_000);
      await race(older, newer, round);
      const record = await stored(user);
      if (record) failures.push(`round ${round}: exists, active ${record.resource.active}`);
    }
    expect(failures).toEqual([]);
  });

  it(`a membership add and remove of one user in one group: the newer one always wins (${ROUNDS} rounds, both orders)`, async () => {
    const failures: string[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const user = newOktaUser("m");
      const group = { id: `00g${user.id}`, displayName: `Race group ${round} ${user.id}` };
      const t0 = Date.now() - 60_000;
      await a.service.handleDelivery(SOURCE, actions("user-lifecycle-create", user, t0));
      // The group exists with another member, so that the race is about this user's link only.
      const other = newOktaUser("o");
      await a.service.handleDelivery(SOURCE, actions("user-lifecycle-create", other, t0));
      await a.service.handleDelivery(SOURCE, actions("group-user-membership-add", other, t0 + 10, group));
      // Start from the state the older event asks for, so that only the newer one changes anything
      // in half the rounds, and from the opposite state in the other half.
      const newerAdds = round % 8 < 4;
      if (round % 16 < 8) {
        const start = newerAdds ? "group-user-membership-add" : "group-user-membership-remove";
        await a.service.handleDelivery(SOURCE, actions(start, user, t0 + 20, group));
      }
      const older = actions(
        newerAdds ? "group-user-membership-remove" : "group-user-membership-add",
        user,
        t0 + 1_000,
        group,
      );
      const newer = actions(
        newerAdds ? "group-user-membership-add" : "group-user-membership-remove",
        user,
        t0 + 2_000,
        group,
      );
      await race(older, newer, round);
      const member = await isMember(user, group.id);
      if (member !== newerAdds) failures.push(`round ${round}: member ${member}, want ${newerAdds}`);
      const otherStays = await isMember(other, group.id);
      if (otherStays !== true) failures.push(`round ${round}: the other member is ${otherStays}`);
    }
    expect(failures).toEqual([]);
  });

  it(`a group deletion and an older membership add of a new user: the group stays deleted (${ROUNDS} rounds, both orders)`, async () => {
    const failures: string[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const member = newOktaUser("gm");
      const late = newOktaUser("gl");
      const group = { id: `00g${member.id}`, displayName: `Deleted race ${round} ${member.id}` };
      const t0 = Date.now() - 60_000;
      await a.service.handleDelivery(SOURCE, actions("group-user-membership-add", member, t0, group));
      const older = actions("group-user-membership-add", late, t0 + 1_000, group);
      const newer = actions("group-lifecycle-delete", late, t0 + 2_000, group);
      const [added, deleted] = await race(older, newer, round);
      const state = await isMember(member, group.id);
      if (state !== "no group") failures.push(`round ${round}: group still there (${JSON.stringify(added)})`);
      if (deleted.outcomes.applied !== 1)
        failures.push(`round ${round}: deletion ${JSON.stringify(deleted)}`);
    }
    expect(failures).toEqual([]);
  });
});
