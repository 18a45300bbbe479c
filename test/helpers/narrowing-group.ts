/**
 * The setup the narrowing tests share (a refused member chunk sent again in pieces): a jobs harness
 * over the emulator, users and a group made through the directory and synced, then the workers
 * stopped so that the test drives the group's next sync by hand.
 */
import type { Logger } from "../../src/observability/logger.js";
import { type JobsHarness, startJobsHarness } from "../integration/jobs/jobs-harness.js";

type Created = Awaited<ReturnType<JobsHarness["directory"]["createUser"]>>;

/** A jobs harness whose one source, `portal`, writes to the embed tenant `tenant`. */
export function startEmbedHarness(name: string, tenant: string, logger?: Logger) {
  return startJobsHarness(name, {
    sources: { portal: { tokens: ["t"], target: { embedTenant: tenant } } },
    ...(logger ? { logger } : {}),
  });
}

export interface IdleGroupOptions {
  /** The users' domain: a set `[stem, count]` is `<stem><i>@<domain>` for i < count. */
  domain: string;
  /** The index of the set the group starts with (none if unset). */
  startWith?: number;
  /** How long the workers may take to sync it all (waitForIdle's own default if unset). */
  idleMs?: number;
}

/**
 * Users and a group of `source`, synced, the workers then stopped: each set of users is made in
 * turn (a set's users at once), then the group `displayName`; answers the sets in their order and
 * the group.
 */
export async function idleGroup<const S extends ReadonlyArray<readonly [stem: string, count: number]>>(
  h: JobsHarness,
  source: string,
  displayName: string,
  sets: S,
  { domain, startWith, idleMs }: IdleGroupOptions,
): Promise<{
  users: { -readonly [K in keyof S]: Created[] };
  group: Awaited<ReturnType<JobsHarness["directory"]["createGroup"]>>;
}> {
  const users: Created[][] = [];
  for (const [stem, count] of sets)
    users.push(
      await Promise.all(
        Array.from({ length: count }, (_, i) =>
          h.directory.createUser(source, h.user(`${stem}${i}@${domain}`)),
        ),
      ),
    );
  const start = startWith === undefined ? [] : users[startWith];
  if (!start) throw new Error(`idleGroup: no set ${startWith} to start the group with`);
  const group = await h.directory.createGroup(
    source,
    h.group(displayName),
    start.map((u) => u.resource.id),
  );
  await h.waitForIdle(idleMs);
  await h.stopWorkers();
  return { users: users as { -readonly [K in keyof S]: Created[] }, group };
}
