/**
 * Probes g (the operator's surface): a reconciliation run and a resync held by the deprovisioning
 * guard, as an operator meets them with the CLI: `reconcile SOURCE --wait` exits 1 and says how to
 * settle it; `scim-bridge status` (idle, exit 0) lists it with the command; `--show` and `--list`
 * read it; `--discard` changes nothing; a second settle is a 409; `--confirm` applies what the
 * guard showed and the run ends `succeeded`. A `warn` line says a run is held; none holds a userName.
 */
import { Writable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type CliResult, runCli } from "../helpers/admin-cli.js";
import { type TestBridge, startTestBridge } from "../helpers/bridge-harness.js";
import { waitFor } from "../helpers/redis-test-prefix.js";

let h: TestBridge;
const lines: string[] = [];
const users: string[] = [];

function cli(...args: string[]): Promise<CliResult> {
  return runCli(h.bridge.url as string, args);
}

const activeOnPlatform = (name: string) => h.platformUsers().get(name)?.active !== false;
const pid = async (id: string) =>
  (await h.admin().get(`/sources/okta/users/${id}`)).body.platformId as string;

beforeAll(async () => {
  const sink = new Writable({
    write(chunk, _enc, done) {
      for (const line of chunk.toString().split("\n")) if (line.trim()) lines.push(line);
      done();
    },
  });
  h = await startTestBridge("probes-g-held", {
    log: { level: "info", destination: sink },
    sources: { okta: { tokens: ["okta-token"] } },
    config: {
      reconcile: { schedule: "0 0 1 1 *", orphans: "deactivate", maxDeprovisionShare: 0.1, keepRuns: 50 },
    },
  });
  const scim = h.scim("okta");
  for (let i = 0; i < 10; i++) users.push((await scim.createUser(`held.person${i}@example.com`)).id);
  for (const id of users.slice(0, 2))
    expect((await scim.patchUser(id, [{ op: "replace", path: "active", value: false }])).status).toBe(200);
  await h.waitForIdle();
}, 30_000);
afterAll(async () => {
  await h?.close();
});

describe("probes g: a run held by the deprovisioning guard, settled from the CLI", () => {
  it("reconcile --wait exits 1 naming the commands; status lists it; --discard changes nothing; a second settle is 409", async () => {
    h.emulator.drift({ action: "addOrphanUser", user: { userName: "held.orphan1@example.com" } });
    h.emulator.drift({ action: "addOrphanUser", user: { userName: "held.orphan2@example.com" } });
    const run = await cli("reconcile", "okta", "--wait", "--timeout-ms", "20000");
    expect(run.code, run.stdout + run.stderr).toBe(1);
    const runId = /^run (\S+) \(okta\): awaiting-confirmation$/m.exec(run.stdout)?.[1];
    expect(runId, run.stdout).toBeDefined();
    expect(run.stdout).toMatch(/^ {2}orphans +2$/m);
    expect(run.stdout).toContain("guard: 2 of 10 owned users (tripped)");
    expect(run.stdout).toContain(
      `scim-bridge reconcile --confirm ${runId} (apply) or --discard ${runId} (drop)`,
    );

    const status = await h.admin().get("/status");
    expect(status.body).toMatchObject({ idle: true });
    expect(status.body.awaitingConfirmation).toEqual([
      { kind: "reconcile", id: runId, source: "okta", plannedDeprovisions: 2, ownedUsers: 10 },
    ]);
    const cliStatus = await cli("status");
    expect(cliStatus.code, cliStatus.stdout).toBe(0);
    expect(cliStatus.stdout).toContain(
      `reconcile ${runId} (okta): 2 of 10 users to deprovision; scim-bridge reconcile --show ${runId} (then --confirm or --discard)`,
    );
    const shown = await cli("reconcile", "--show", runId as string);
    expect(shown.code).toBe(0);
    expect(shown.stdout).toContain(`run ${runId} (okta): awaiting-confirmation`);
    const listed = await cli("reconcile", "--list", "--source", "okta");
    expect(listed.code).toBe(0);
    expect(listed.stdout).toMatch(new RegExp(`^${runId}  okta  awaiting-confirmation  `, "m"));

    const discard = await cli("reconcile", "--discard", runId as string);
    expect(discard.code, discard.stderr).toBe(0);
    expect(discard.stdout).toContain(`run ${runId}: discarded`);
    await h.waitForIdle();
    expect(activeOnPlatform("held.orphan1@example.com")).toBe(true);
    expect(activeOnPlatform("held.orphan2@example.com")).toBe(true);
    expect((await h.admin().get("/status")).body.awaitingConfirmation).toEqual([]);
    expect((await cli("status")).stdout).toMatch(/awaiting confirmation: none/);
    const again = await cli("reconcile", "--confirm", runId as string);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/409 invalid_state: .*discarded/);
    const audit = await h.admin().get("/audit");
    expect(
      audit.body.items.map((e: { action: string; outcome: string }) => `${e.action} ${e.outcome}`),
    ).toEqual(expect.arrayContaining(["reconcile.discard accepted", "reconcile.confirm refused"]));
  });

  it("--confirm applies what the guard showed; the run ends succeeded and the CLI's status is clean", async () => {
    const started = await h.admin().post("/sources/okta/reconcile", { dryRun: false });
    expect(started.status).toBe(202);
    expect(started.body).toMatchObject({ runId: expect.any(String), state: "queued", dryRun: false });
    const runId = started.body.runId as string;
    await waitFor(
      async () => (await h.admin().get(`/reconcile-runs/${runId}`)).body.state === "awaiting-confirmation",
      { what: "the run to be held" },
    );
    const confirm = await cli("reconcile", "--confirm", runId);
    expect(confirm.code, confirm.stderr).toBe(0);
    expect(confirm.stdout).toMatch(new RegExp(`run ${runId}: (queued|running|succeeded)`));
    await waitFor(async () => /: succeeded/.test((await cli("reconcile", "--show", runId)).stdout), {
      timeoutMs: 20_000,
      what: "the run to succeed",
    });
    await h.waitForIdle();
    expect(activeOnPlatform("held.orphan1@example.com")).toBe(false);
    expect(activeOnPlatform("held.orphan2@example.com")).toBe(false);
    for (let i = 2; i < 10; i++) expect(activeOnPlatform(`held.person${i}@example.com`)).toBe(true);
    const st = await cli("status");
    expect(st.code).toBe(0);
    expect(st.stdout).toMatch(/awaiting confirmation: none/);
  });

  it("a held whole-source resync: listed by status, --show, --confirm deprovisions the two it counted", async () => {
    for (const id of users.slice(0, 2))
      h.emulator.drift({ action: "setUserActive", userId: await pid(id), active: true });
    const started = await cli("resync", "okta", "--wait", "--timeout-ms", "20000");
    expect(started.code, started.stdout + started.stderr).toBe(1);
    const opId = /^resync (\S+) \(okta\): awaiting-confirmation/m.exec(started.stdout)?.[1];
    expect(opId, started.stdout).toBeDefined();
    expect(started.stdout).toContain(
      `scim-bridge resync --confirm ${opId} (apply) or --discard ${opId} (drop)`,
    );
    expect((await h.admin().get("/status")).body.awaitingConfirmation).toEqual([
      { kind: "resync", id: opId, source: "okta", plannedDeprovisions: 2, ownedUsers: 10 },
    ]);
    const st = await cli("status");
    expect(st.code).toBe(0);
    expect(st.stdout).toContain(`resync ${opId} (okta): 2 of 10 users to deprovision`);
    expect(activeOnPlatform("held.person0@example.com")).toBe(true);
    const confirm = await cli("resync", "--confirm", opId as string);
    expect(confirm.code, confirm.stderr).toBe(0);
    await waitFor(async () => (await h.admin().get(`/resyncs/${opId}`)).body.state === "succeeded", {
      timeoutMs: 20_000,
      what: "the resync to succeed",
    });
    await h.waitForIdle();
    expect(activeOnPlatform("held.person0@example.com")).toBe(false);
    expect(activeOnPlatform("held.person1@example.com")).toBe(false);
    expect((await cli("resync", "--discard", opId as string)).code).toBe(1);
  });

  it("a warn line says a run is held, with its id and counts, and no line names a user", () => {
    const parsed = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    const held = parsed.filter((l) => l.level === 40 && /guard|confirm/i.test(String(l.msg)));
    expect(held.length, JSON.stringify(parsed.filter((l) => l.level === 40))).toBeGreaterThan(0);
    for (const line of lines) expect(/held\.(person|orphan)/.test(line), line).toBe(false);
  });
});
