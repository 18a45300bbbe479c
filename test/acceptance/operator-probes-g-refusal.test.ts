/**
 * Probes g (the operator's surface): the platform refuses a user for good (409: its new userName is
 * held by a platform user no source owns). The operator finds it where docs/operations.md says
 * ("Finding and fixing what went wrong"): the dead-letter list with a readable reason, the user's
 * sync status, the metrics and one log line; fixes the cause on the platform; takes it back with
 * the admin API or the CLI; and sees it synced, the dead letter gone and the metrics back. Every
 * line the bridge wrote meanwhile (debug included) is free of personal data.
 */
import { Writable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type CliResult, runCli } from "../helpers/admin-cli.js";
import {
  E2E_ADMIN_TOKEN,
  PLATFORM_TOKEN,
  type TestBridge,
  startTestBridge,
} from "../helpers/bridge-harness.js";
import { waitFor } from "../helpers/redis-test-prefix.js";

let h: TestBridge;
const lines: string[] = [];

/** The CLI in this process, against the bridge over HTTP: exit code and what it printed. */
function cli(...args: string[]): Promise<CliResult> {
  return runCli(h.bridge.url as string, args);
}

/** The value of one series in /metrics' text (labels in any order), undefined when absent. */
async function metric(name: string, labels: Record<string, string>): Promise<number | undefined> {
  const text = (await h.http.get("/metrics")).text;
  for (const line of text.split("\n")) {
    const m = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const got = Object.fromEntries([...(m[2] ?? "").matchAll(/(\w+)="([^"]*)"/g)].map((x) => [x[1], x[2]]));
    if (Object.entries(labels).every(([k, v]) => got[k] === v)) return Number(m[3]);
  }
  return undefined;
}

/** Deletes a platform user through the platform's own API (the operator's fix). */
async function deleteOnPlatform(userName: string): Promise<void> {
  const id = h.platformUsers().get(userName.toLowerCase())?.id;
  expect(id, userName).toBeDefined();
  const res = await fetch(`${h.platformUrl}/api/scim/v2/Users/${id}`, {
    method: "DELETE",
    headers: { Authorization: `Bearer ${PLATFORM_TOKEN}` },
  });
  expect(res.status).toBe(204);
}

/** Renames a synced okta user onto a userName an unowned platform user holds: a 409 dead letter. */
async function refusedRename(from: string, to: string): Promise<string> {
  const user = await h.scim("okta").createUser(from, { name: { givenName: "Ada", familyName: "Lovelace" } });
  await h.waitForIdle();
  h.emulator.drift({ action: "addOrphanUser", user: { userName: to, active: true } });
  const res = await h.scim("okta").patchUser(user.id, [{ op: "replace", path: "userName", value: to }]);
  expect(res.status).toBe(200);
  await waitFor(async () => (await h.admin().get(`/sources/okta/users/${user.id}`)).body.state === "dead", {
    timeoutMs: 20_000,
    what: "the user to be a dead letter",
  });
  await h.waitForIdle();
  return user.id;
}

const PERSONAL = [
  "ada.lovelace",
  "grace.hopper",
  "alan.turing",
  "hedy.lamarr",
  "katherine.johnson",
  "Lovelace",
  "okta-token",
  PLATFORM_TOKEN,
  E2E_ADMIN_TOKEN,
];

beforeAll(async () => {
  const sink = new Writable({
    write(chunk, _enc, done) {
      for (const line of chunk.toString().split("\n")) if (line.trim()) lines.push(line);
      done();
    },
  });
  h = await startTestBridge("probes-g-refusal", {
    log: { level: "debug", destination: sink },
    config: {
      reconcile: { schedule: "0 0 1 1 *", orphans: "report", maxDeprovisionShare: 0.5, keepRuns: 50 },
    },
  });
}, 30_000);
afterAll(async () => {
  await h?.close();
});

describe("probes g: a user the platform refuses for good", () => {
  it("is found in the dead letters, its status, the metrics and a log line; fixed and retried from the CLI, it lands", async () => {
    const id = await refusedRename("ada.lovelace@example.com", "grace.hopper@example.com");

    // `scim-bridge status`: idle (dead letters do not hold it), and the dead letter counted.
    const status = await cli("status");
    expect(status.code, status.stdout + status.stderr).toBe(0);
    expect(status.stdout).toMatch(/dead letters: 1/);
    expect(status.stdout).toMatch(/okta: 1 users, 0 groups, 1 dead letters/);

    // `scim-bridge dead-letters list`: the ref, a code and a readable reason (no JSON blob).
    const list = await cli("dead-letters", "list");
    expect(list.code, list.stderr).toBe(0);
    expect(list.stdout).toContain(`okta/user/${id}  platform_conflict  `);
    const api = await h.admin().get("/dead-letters?source=okta");
    expect(api.status).toBe(200);
    expect(api.body.total).toBe(1);
    const letter = api.body.items[0];
    expect(letter).toMatchObject({
      ref: { source: "okta", kind: "user", id },
      code: "platform_conflict",
      operation: expect.any(String),
      at: expect.any(String),
      attempts: expect.any(Number),
    });
    expect(letter.reason).toMatch(/409|taken|conflict/i);
    expect(letter.reason).not.toMatch(/^\s*[{[]/);

    // `scim-bridge status okta/user/<id>`: dead, exit 1, the error and what to do.
    const one = await cli("status", `okta/user/${id}`);
    expect(one.code).toBe(1);
    expect(one.stdout).toContain(`okta/user/${id}: dead`);
    expect(one.stdout).toContain("platform_conflict");
    expect(one.stdout).toContain(`scim-bridge dead-letters retry okta/user/${id}`);
    const byName = await cli("status", "okta", "--user-name", "GRACE.HOPPER@example.com", "--json");
    expect(byName.code).toBe(1);
    expect(JSON.parse(byName.stdout)).toMatchObject({
      id,
      state: "dead",
      lastError: { code: "platform_conflict" },
    });

    // The metrics.
    expect(await metric("dead_letters", { source: "okta" })).toBe(1);
    expect(await metric("dead_letters", { source: "entra" })).toBe(0);
    expect(await metric("dead_letters_total", { source: "okta", code: "platform_conflict" })).toBe(1);
    expect(await metric("sync_jobs_total", { kind: "user", outcome: "dead" })).toBeGreaterThanOrEqual(1);
    const permanent = (await h.http.get("/metrics")).text.match(
      /^platform_failures_total\{(?=[^}]*class="permanent")[^}]*\} (\d+)$/m,
    );
    expect(permanent, "platform_failures_total{class=permanent}").not.toBeNull();

    // One error line naming the entity and the code.
    const errorLine = lines
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .find(
        (l) => (l.level as number) >= 50 && JSON.stringify(l).includes(id) && l.code === "platform_conflict",
      );
    expect(errorLine, lines.filter((l) => l.includes('"level":50')).join("\n")).toBeDefined();

    // The fix: the stray platform user is removed; the CLI takes the dead letter back.
    await deleteOnPlatform("grace.hopper@example.com");
    const retry = await cli("dead-letters", "retry", `okta/user/${id}`);
    expect(retry.code, retry.stdout + retry.stderr).toBe(0);
    expect(retry.stdout).toContain("retried 1");
    await waitFor(async () => (await cli("status", `okta/user/${id}`)).code === 0, {
      timeoutMs: 20_000,
      what: "the user synced",
    });
    await h.waitForIdle();
    expect(h.platformUsers().get("grace.hopper@example.com")?.active).toBe(true);
    expect(h.platformUsers().has("ada.lovelace@example.com")).toBe(false);
    expect((await cli("dead-letters", "list")).stdout).toMatch(/^0 dead letter\(s\)/);
    expect(await metric("dead_letters", { source: "okta" })).toBe(0);
    const after = await h.admin().get("/status");
    expect(after.body).toMatchObject({ idle: true, deadLetters: 0 });
    expect(after.body.sources.okta.deadLetters).toBe(0);
    const synced = await h.admin().get(`/sources/okta/users/${id}`);
    expect(synced.body).toMatchObject({ state: "synced", lastError: null });
  });

  it("fixed and resynced (not retried) from the CLI, the dead letter goes too", async () => {
    const id = await refusedRename("alan.turing@example.com", "hedy.lamarr@example.com");
    expect((await h.admin().get("/status")).body.deadLetters).toBe(1);
    await deleteOnPlatform("hedy.lamarr@example.com");
    const resync = await cli("resync", "okta", "--user", id, "--wait", "--timeout-ms", "20000");
    expect(resync.code, resync.stdout + resync.stderr).toBe(0);
    expect(resync.stdout).toMatch(/succeeded/);
    await h.waitForIdle();
    expect(h.platformUsers().get("hedy.lamarr@example.com")?.active).toBe(true);
    expect((await h.admin().get(`/sources/okta/users/${id}`)).body).toMatchObject({
      state: "synced",
      lastError: null,
    });
    expect((await h.admin().get("/dead-letters")).body.total).toBe(0);
    expect((await h.admin().get("/status")).body.deadLetters).toBe(0);
    expect(await metric("dead_letters", { source: "okta" })).toBe(0);
  });

  it("discarded, it stays dead and leaves the count; the API's one-letter retry is 404 then; a resync lands it", async () => {
    const id = await refusedRename("katherine.johnson@example.com", "katherine.johnson2@example.com");
    const discard = await h.admin().delete(`/dead-letters/okta/user/${id}`);
    expect(discard.status).toBe(200);
    expect(discard.body).toEqual({ discarded: true });
    expect(await metric("dead_letters", { source: "okta" })).toBe(0);
    expect((await h.admin().get("/status")).body.deadLetters).toBe(0);
    const entity = await h.admin().get(`/sources/okta/users/${id}`);
    expect(entity.body).toMatchObject({
      state: "dead",
      lastError: {
        code: "platform_conflict",
        discardedBy: expect.any(String),
        discardedAt: expect.any(String),
      },
    });
    const retryGone = await h.admin().post(`/dead-letters/okta/user/${id}/retry`);
    expect(retryGone.status).toBe(404);
    expect(retryGone.body.error.code).toBe("not_found");
    const shown = await cli("status", `okta/user/${id}`);
    expect(shown.stdout).toContain(`scim-bridge resync okta --user ${id}`);

    await deleteOnPlatform("katherine.johnson2@example.com");
    const started = await h.admin().post("/sources/okta/resync", { users: [id] });
    expect(started.status).toBe(202);
    const op = await waitFor(
      async () => {
        const got = await h.admin().get(`/resyncs/${started.body.id}`);
        return ["succeeded", "failed"].includes(got.body.state) ? got.body : undefined;
      },
      { timeoutMs: 20_000, what: "the resync to end" },
    );
    expect(op).toMatchObject({ state: "succeeded", outcome: { synced: 1, failed: 0 } });
    expect((await h.admin().get(`/sources/okta/users/${id}`)).body.state).toBe("synced");
  });

  it("no line the bridge wrote, debug included, holds a userName, a name or a token", () => {
    expect(lines.length).toBeGreaterThan(50);
    for (const line of lines) {
      for (const word of PERSONAL) {
        expect(line.toLowerCase().includes(word.toLowerCase()), `${word} in ${line}`).toBe(false);
      }
    }
  });
});
