/**
 * The stores' page walk (OperationStore.pages, listAll), which GET /status and a held scheduled
 * run's superseding both read every run through: runs start and are trimmed while it reads. Each
 * page starts below the last run read, not at an offset, so a run started between two pages
 * (which pushed the rest one place later: the run at a page's end was read twice) and runs trimmed
 * from the part already read (which pulled the rest earlier: runs fell between two pages) change
 * nothing: every run there throughout is read once. Real Redis.
 */
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ReconcileRunStore } from "../../../src/admin/reconcile-run-store.js";
import type { ReconcileRun } from "../../../src/reconcile/reconcile-run.js";
import type { RunState } from "../../../src/reconcile/reconcile-types.js";
import { TEST_REDIS_URL, deleteKeys, testPrefix } from "../../helpers/redis-test-prefix.js";

describe("reading every stored run while runs start and are trimmed", () => {
  let redis: Redis;
  const prefixes: string[] = [];

  beforeAll(() => {
    redis = new Redis(TEST_REDIS_URL);
  });
  afterAll(async () => {
    for (const prefix of prefixes) await deleteKeys(redis, prefix);
    await redis.quit();
  });

  /** A store of its own (keeping `keep` finished runs per source). */
  const storeOf = (keep: number) => {
    const prefix = testPrefix("operation-pages");
    prefixes.push(prefix);
    return new ReconcileRunStore(redis, prefix, keep);
  };
  /** `n` runs of `source` in `state`, oldest first (held ones are scheduled runs, as superseding reads them). */
  const runsIn = async (store: ReconcileRunStore, source: string, state: RunState, n: number) => {
    const made: ReconcileRun[] = [];
    for (let i = 0; i < n; i++) {
      const run = await store.createRun({ source, dryRun: false, trigger: "schedule" });
      if (state !== "queued") await store.transition({ ...run, state }, ["queued"]);
      made.push({ ...run, state });
    }
    return made;
  };
  /** Walks the pages, calling `between` after each page but the last; the ids read, in order. */
  const walk = async (
    store: ReconcileRunStore,
    options: { source?: string; pageSize: number },
    between: (page: number) => Promise<void>,
  ) => {
    const read: string[] = [];
    let page = 0;
    for await (const items of store.pages(options)) {
      read.push(...items.map((run) => run.runId));
      await between(page++);
    }
    return read;
  };
  const newestFirst = (...groups: ReconcileRun[][]) =>
    groups
      .flat()
      .map((run) => run.runId)
      .reverse();

  it("a run started between two pages: every run is read once, the new one not at all", async () => {
    const store = storeOf(100);
    const older = await runsIn(store, "okta", "succeeded", 4);
    const held = await runsIn(store, "okta", "awaiting-confirmation", 1);
    const newer = await runsIn(store, "entra", "succeeded", 5);
    let started = "";
    // Across sources (the index of all): the held run is the second page's first.
    const read = await walk(store, { pageSize: 5 }, async (page) => {
      if (page === 0)
        started = (await store.createRun({ source: "okta", dryRun: true, trigger: "admin" })).runId;
    });
    expect(read).toEqual(newestFirst(older, held, newer));
    expect(read).not.toContain(started);
    expect((await store.listAll()).map((run) => run.runId)).toEqual([started, ...read]);
  });

  it("runs trimmed from the part already read, more than a page: none of the rest falls between pages", async () => {
    const store = storeOf(100);
    const runs = await runsIn(store, "okta", "succeeded", 20);
    const held = await runsIn(store, "okta", "awaiting-confirmation", 3);
    const all = newestFirst(runs, held);
    const read = await walk(store, { source: "okta", pageSize: 5 }, async (page) => {
      // What trimming does (OperationStore.remove), to runs read already: 4, then 6.
      const gone = page === 0 ? all.slice(1, 5) : page === 1 ? [...all.slice(0, 1), ...all.slice(5, 10)] : [];
      for (const id of gone) await store.remove(id, "okta");
    });
    expect(read).toEqual(all);
  });

  it("runs that finish meanwhile, trimmed when a run starts: the held runs after them are all read, once", async () => {
    // keepRuns 1: the runs read first finish, a new run starts, and its creation trims three of them.
    const store = storeOf(1);
    const held = await runsIn(store, "okta", "awaiting-confirmation", 6);
    const running = await runsIn(store, "okta", "running", 4);
    let started = "";
    const read = await walk(store, { source: "okta", pageSize: 4 }, async (page) => {
      if (page !== 0) return;
      for (const run of running) await store.transition({ ...run, state: "succeeded" }, ["running"]);
      started = (await store.createRun({ source: "okta", dryRun: false, trigger: "schedule" })).runId;
    });
    expect(read).toEqual(newestFirst(held, running));
    // The trim did happen: the newest finished run is kept, the three before it are gone.
    const now = (await store.listAll({ source: "okta" })).map((run) => run.runId);
    expect(now).toEqual([started, ...newestFirst(running.slice(3)), ...newestFirst(held)]);
  });

  it("listAll reads every page: one source's runs, or all", async () => {
    const store = storeOf(100);
    const okta = await runsIn(store, "okta", "succeeded", 7);
    const entra = await runsIn(store, "entra", "awaiting-confirmation", 2);
    const ids = (runs: ReconcileRun[]) => runs.map((run) => run.runId);
    expect(ids(await store.listAll({ source: "okta", pageSize: 3 }))).toEqual(newestFirst(okta));
    expect(ids(await store.listAll({ pageSize: 3 }))).toEqual(newestFirst(okta, entra));
    expect(ids(await store.listAll({ source: "nowhere" }))).toEqual([]);
  });
});
