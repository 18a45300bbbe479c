import { Counter, Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import {
  MetricsGathering,
  RESTART_POLICY,
  type WorkerExit,
  decideOnWorkerExit,
  resolveProcessCount,
  shutdownExitCode,
} from "../../../src/server/cluster-supervisor.js";

describe("resolveProcessCount", () => {
  it("takes a number as it is and turns auto into the CPUs available", () => {
    expect(resolveProcessCount(1, 8)).toBe(1);
    expect(resolveProcessCount(3, 8)).toBe(3);
    expect(resolveProcessCount("auto", 2)).toBe(2);
    expect(resolveProcessCount("auto", 0)).toBe(1);
  });
});

describe("decideOnWorkerExit", () => {
  const now = 1_000_000;
  const up: WorkerExit = { stopping: false, wasReady: true, started: true, restarts: [], now };

  it("does nothing while the primary stops", () => {
    expect(decideOnWorkerExit({ ...up, stopping: true })).toEqual({ action: "none" });
    expect(decideOnWorkerExit({ ...up, stopping: true, wasReady: false, started: false })).toEqual({
      action: "none",
    });
  });

  it("restarts a process that was up, after the policy's delay", () => {
    expect(decideOnWorkerExit(up)).toEqual({ action: "restart", delayMs: RESTART_POLICY.delayMs });
    // One of the first processes, ready, while another is still starting: replaced too.
    expect(decideOnWorkerExit({ ...up, started: false })).toEqual({
      action: "restart",
      delayMs: RESTART_POLICY.delayMs,
    });
  });

  it("gives up when a process of the first start could not start, like a single process would", () => {
    expect(decideOnWorkerExit({ ...up, wasReady: false, started: false })).toEqual({
      action: "give-up",
      reason: "a bridge process could not start",
    });
  });

  it("retries a replacement that fails to start, within the crash-loop bound", () => {
    expect(decideOnWorkerExit({ ...up, wasReady: false, restarts: [now - 1_000] }).action).toBe("restart");
  });

  it("gives up on a crash loop: maxRestarts restarts within the window", () => {
    const policy = { delayMs: 10, maxRestarts: 3, windowMs: 60_000 };
    const recent = [now - 50_000, now - 20_000, now - 1_000];
    const decision = decideOnWorkerExit({ ...up, restarts: recent }, policy);
    expect(decision).toEqual({
      action: "give-up",
      reason: "bridge processes keep exiting: 3 restarts within 60 s",
    });
    // Restarts older than the window no longer count.
    const old = [now - 70_000, now - 61_000, now - 1_000];
    expect(decideOnWorkerExit({ ...up, restarts: old }, policy)).toEqual({ action: "restart", delayMs: 10 });
  });
});

describe("shutdownExitCode", () => {
  const clean = { code: 0, signal: null };
  it("is 0 when every process stopped cleanly", () => {
    expect(shutdownExitCode({ exits: [clean, clean], killed: false, failed: false })).toBe(0);
    expect(shutdownExitCode({ exits: [], killed: false, failed: false })).toBe(0);
    // Ended by the SIGTERM it was sent before it had its own handler (still starting).
    expect(
      shutdownExitCode({ exits: [clean, { code: null, signal: "SIGTERM" }], killed: false, failed: false }),
    ).toBe(0);
  });

  it("is 1 when a process had to be killed, exited non-zero, or the primary gave up", () => {
    expect(shutdownExitCode({ exits: [clean], killed: true, failed: false })).toBe(1);
    expect(
      shutdownExitCode({ exits: [clean, { code: 1, signal: null }], killed: false, failed: false }),
    ).toBe(1);
    expect(
      shutdownExitCode({ exits: [{ code: null, signal: "SIGKILL" }], killed: false, failed: false }),
    ).toBe(1);
    expect(shutdownExitCode({ exits: [clean], killed: false, failed: true })).toBe(1);
  });
});

describe("MetricsGathering", () => {
  /** One process's metrics (getMetricsAsJSON) with a counter at `value`. */
  async function part(value: number) {
    const registry = new Registry();
    new Counter({ name: "scim_test_total", help: "t", registers: [registry] }).inc(value);
    return registry.getMetricsAsJSON();
  }

  function gather(asked: number[], timeoutMs = 1_000) {
    let settle!: (result: { text: string } | { error: string }) => void;
    const result = new Promise<{ text: string } | { error: string }>((resolve) => {
      settle = resolve;
    });
    return { gathering: new MetricsGathering(asked, settle, timeoutMs), result };
  }

  it("sums the processes' answers once every process asked has answered", async () => {
    const { gathering, result } = gather([1, 2]);
    gathering.answer(1, { metrics: await part(2) });
    expect(gathering.settled).toBe(false);
    gathering.answer(2, { metrics: await part(3) });
    expect(await result).toEqual({ text: expect.stringContaining("scim_test_total 5") });
  });

  it("stops waiting for a process that exits, and answers with the processes alive", async () => {
    const { gathering, result } = gather([1, 2]);
    gathering.answer(1, { metrics: await part(2) });
    gathering.gone(2);
    expect(await result).toEqual({ text: expect.stringContaining("scim_test_total 2") });
  });

  it("answers at once when no process serves metrics yet", async () => {
    const { result } = gather([]);
    expect(await result).toEqual({ text: "\n" });
  });

  it("fails when a process cannot read its metrics, or one does not answer in time", async () => {
    const failing = gather([1, 2]);
    failing.gathering.answer(1, { error: "boom" });
    expect(await failing.result).toEqual({ error: expect.stringContaining("boom") });

    const hung = gather([1, 2], 30);
    hung.gathering.answer(1, { metrics: await part(1) });
    expect(await hung.result).toEqual({ error: expect.stringMatching(/1 process\(es\) did not answer/) });
  });

  it("ignores an answer from a process it did not ask, or a second one", async () => {
    const { gathering, result } = gather([1]);
    gathering.answer(7, { metrics: await part(100) });
    gathering.answer(1, { metrics: await part(1) });
    gathering.answer(1, { metrics: await part(1) });
    expect(await result).toEqual({ text: expect.stringContaining("scim_test_total 1") });
  });
});
