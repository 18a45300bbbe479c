/**
 * The bulk endpoint keeps failing (503, no Retry-After) while users wait in a lifecycle batch
 * (invariant 7, "Nothing fails silently"). What an operator sees: each waiting user's status says
 * it waits on the platform, why (the failure's code) and when it is tried again; a warn line and
 * `sync_jobs_total{kind="lifecycle",outcome="retry"}` say the flush fails. An outage spends no
 * attempt (it is not the user's change refused): however long it lasts, no user becomes a dead
 * letter for it, and once the platform answers again, everything drains by itself and the statuses
 * clear (ARCHITECTURE.md: transient failures retry; a deprovisioning must not wait for an admin).
 */
import { Writable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type TestBridge, startTestBridge } from "../helpers/bridge-harness.js";
import { waitFor } from "../helpers/redis-test-prefix.js";

interface LogLine {
  level: number;
  msg: string;
  code?: string;
  [key: string]: unknown;
}

interface Status {
  state: string;
  lastError: { code: string; operation?: string; message: string; at: string; attempts: number } & Record<
    string,
    unknown
  >;
}

const BULK_DOWN = { id: "bulk-down", type: "error", status: 503, match: { operation: "bulkUsers" } } as const;

/** A bridge whose log lines are kept, with `attempts` per user and a `windowMs` batch window. */
async function bridge(name: string, attempts: number, windowMs: number) {
  const lines: LogLine[] = [];
  const sink = new Writable({
    write(chunk, _enc, done) {
      for (const line of chunk.toString().split("\n")) if (line.trim()) lines.push(JSON.parse(line));
      done();
    },
  });
  const h = await startTestBridge(name, {
    log: { level: "info", destination: sink },
    sources: { okta: { tokens: ["okta-token"] } },
    config: {
      sync: {
        concurrency: 8,
        attempts,
        lifecycleBatchWindowMs: windowMs,
        sweepIntervalMs: 500,
        sweepAfterMs: 1_000,
      },
    },
  });
  return { h, lines };
}

const statusOf = async (h: TestBridge, id: string) =>
  (await h.admin().get(`/sources/okta/users/${id}`)).body as Status;
const metric = async (h: TestBridge, pattern: RegExp) => {
  const match = (await h.http.get("/metrics")).text.match(pattern);
  return match ? Number(match[1]) : 0;
};
const deactivate = async (h: TestBridge, id: string) =>
  expect((await h.scim("okta").patchUser(id, [{ op: "replace", path: "active", value: false }])).status).toBe(
    200,
  );
const activeOf = (h: TestBridge, userName: string) => h.platformUsers().get(userName)?.active;

describe("lifecycle-outage-n: the bulk endpoint keeps failing", () => {
  let steady: { h: TestBridge; lines: LogLine[] };
  let short: { h: TestBridge; lines: LogLine[] };
  beforeAll(async () => {
    steady = await bridge("lifecycle-outage-n-steady", 8, 200);
    short = await bridge("lifecycle-outage-n-short", 3, 50);
  });
  afterAll(async () => {
    await steady?.h.close();
    await short?.h.close();
  });

  it("each waiting user shows it waits on the platform, why and until when; a warn line and a metric say the flush fails; all drain once it answers", async () => {
    const { h, lines } = steady;
    const names = [0, 1, 2].map((i) => `outage.wait.${i}.n@example.com`);
    const users = [];
    for (const name of names) users.push(await h.scim("okta").createUser(name));
    await h.waitForIdle();
    h.emulator.addFault({ ...BULK_DOWN });
    try {
      for (const u of users) await deactivate(h, u.id);
      for (const u of users) {
        const status = await waitFor(
          async () => {
            const s = await statusOf(h, u.id);
            return s.lastError?.attempts >= 2 ? s : null;
          },
          { timeoutMs: 20_000, what: `the status of ${u.id} to show the failing bulk call` },
        );
        expect(status.state).toBe("retrying");
        expect(status.lastError).toMatchObject({ code: "platform_server", operation: "bulkUsers" });
        const retryAt = Date.parse(String(status.lastError.retryAt));
        expect(retryAt).toBeGreaterThan(Date.parse(status.lastError.at));
        expect(status.lastError.message).toContain("tried again");
      }
      // A sync of a waiting user (the sweeper's, an admin's resync) keeps its note: it still waits.
      const first = users[0]?.id as string;
      const before = (await h.admin().get(`/sources/okta/users/${first}`)).body as {
        lastApplied: { at: string };
      };
      expect((await h.admin().post("/sources/okta/resync", { users: [first] })).status).toBe(202);
      const after = await waitFor(
        async () => {
          const body = (await h.admin().get(`/sources/okta/users/${first}`)).body as Status & {
            lastApplied: { at: string };
          };
          return body.lastApplied.at !== before.lastApplied.at ? body : null;
        },
        { what: "the resync of a waiting user" },
      );
      expect(after.state).toBe("retrying");
      expect(after.lastError).toMatchObject({ code: "platform_server", operation: "bulkUsers" });
      const overall = (await h.admin().get("/status")).body as { idle: boolean; pending: number };
      expect(overall.idle).toBe(false);
      expect(overall.pending).toBeGreaterThanOrEqual(3);
      expect(await metric(h, /sync_jobs_total\{kind="lifecycle",outcome="retry"\} (\d+)/)).toBeGreaterThan(0);
      const warned = lines.filter(
        (l) => l.level >= 40 && /lifecycle/.test(l.msg) && l.code === "platform_server",
      );
      expect(warned.length).toBeGreaterThan(0);
      // No personal data in the lines (the users' bridge ids lead to them).
      for (const l of warned) for (const name of names) expect(JSON.stringify(l)).not.toContain(name);
      for (const name of names) expect(activeOf(h, name)).toBe(true);
    } finally {
      h.emulator.clearFaults();
    }
    await h.waitForIdle(60_000);
    for (const name of names) expect(activeOf(h, name)).toBe(false);
    for (const u of users) {
      const s = await statusOf(h, u.id);
      expect(s.state).toBe("synced");
      expect(s.lastError).toBeNull();
    }
    expect((await h.admin().get("/status")).body).toMatchObject({ idle: true, deadLetters: 0 });
  }, 90_000);

  it("an outage longer than the users' attempts: none is a dead letter, each shows it waits; the deprovisioning lands by itself once the platform answers", async () => {
    const { h } = short;
    const names = [0, 1].map((i) => `outage.dead.${i}.n@example.com`);
    const users = [];
    for (const name of names) users.push(await h.scim("okta").createUser(name));
    await h.waitForIdle();
    h.emulator.addFault({ ...BULK_DOWN });
    try {
      for (const u of users) await deactivate(h, u.id);
      // More failed calls than the users' attempts (3).
      for (const u of users) {
        const status = await waitFor(
          async () => {
            const s = await statusOf(h, u.id);
            return s.lastError?.attempts >= 5 ? s : null;
          },
          { timeoutMs: 30_000, what: `more failed calls for ${u.id} than its attempts` },
        );
        expect(status.state).toBe("retrying");
        expect(status.lastError).toMatchObject({ code: "platform_server", operation: "bulkUsers" });
        expect(status.lastError.message).toContain("until the platform answers");
      }
      const overall = (await h.admin().get("/status")).body as { deadLetters: number; idle: boolean };
      expect(overall).toMatchObject({ deadLetters: 0, idle: false });
      expect(await metric(h, /dead_letters_total\{source="okta",code="platform_server"\} (\d+)/)).toBe(0);
      for (const name of names) expect(activeOf(h, name)).toBe(true);
    } finally {
      h.emulator.clearFaults();
    }
    // The platform answers again: the deprovisioning lands without an admin (backoff at most 30 s).
    await h.waitForIdle(60_000);
    for (const name of names) expect(activeOf(h, name)).toBe(false);
    for (const u of users) {
      const s = await statusOf(h, u.id);
      expect(s.state).toBe("synced");
      expect(s.lastError).toBeNull();
    }
    expect((await h.admin().get("/status")).body).toMatchObject({ idle: true, deadLetters: 0 });
  }, 90_000);
});
