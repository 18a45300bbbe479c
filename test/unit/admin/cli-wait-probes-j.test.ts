import { describe, expect, it } from "vitest";
import { type CliIo, runAdminCommand } from "../../../src/cli/admin-commands.js";

type Answer = { status: number; body: unknown } | "unreachable";

/** A CLI whose admin API answers the run's POST at once and its GETs from `polls`, in turn (the last one repeats). */
function cliPolling(polls: Answer[]) {
  const out: string[] = [];
  const err: string[] = [];
  let gets = 0;
  const io: CliIo = {
    stdout: (text) => out.push(text),
    stderr: (text) => err.push(text),
    env: { SCIM_BRIDGE_ADMIN_TOKEN: "t0k" },
    pollMs: 1,
    fetch: (async (input: string | URL, init?: RequestInit) => {
      const path = new URL(String(input)).pathname;
      let answer: Answer;
      if (init?.method === "POST") answer = { status: 202, body: { runId: "r1", state: "queued" } };
      else answer = polls[Math.min(gets++, polls.length - 1)] as Answer;
      if (answer === "unreachable") throw new TypeError(`fetch failed: ${path}`);
      return new Response(JSON.stringify(answer.body), { status: answer.status });
    }) as typeof fetch,
  };
  return { io, out, err, gets: () => gets };
}

const run = (state: string) => ({
  status: 200,
  body: { runId: "r1", source: "okta", state, dryRun: true, counts: {}, repairs: { applied: false } },
});
const unavailable = {
  status: 503,
  body: { error: { code: "unavailable", message: "Redis is unavailable" } },
};

describe("reconcile --wait while the bridge restarts", () => {
  it("asks again when the bridge cannot be reached or answers 503, and exits as the run ended", async () => {
    const cli = cliPolling([
      run("running"),
      "unreachable",
      unavailable,
      { status: 502, body: {} },
      run("succeeded"),
    ]);
    expect(await runAdminCommand("reconcile", ["okta", "--dry-run", "--wait"], cli.io)).toBe(0);
    expect(cli.out.join("")).toContain("run r1 (okta): succeeded [dry run]");
    expect(cli.err.join("")).toBe("");
    expect(cli.gets()).toBe(5);
  });

  it("still gives up at its deadline, saying what it last got", async () => {
    const cli = cliPolling([run("running"), unavailable]);
    const code = await runAdminCommand("reconcile", ["okta", "--wait", "--timeout-ms", "30"], cli.io);
    expect(code).toBe(1);
    expect(cli.err.join("")).toMatch(
      /timed out waiting for \/reconcile-runs\/r1 \(last: 503 unavailable: Redis is unavailable\)/,
    );
  });

  it("an answer that says no (a 404, a 401) ends the wait at once", async () => {
    for (const status of [404, 401]) {
      const cli = cliPolling([
        run("running"),
        { status, body: { error: { code: "x", message: "no" } } },
        run("succeeded"),
      ]);
      expect(await runAdminCommand("reconcile", ["okta", "--wait"], cli.io)).toBe(1);
      expect(cli.gets()).toBe(2);
    }
  });

  it("a poll left unanswered (a black-holed connection) is given up after requestTimeoutMs and asked again", async () => {
    let gets = 0;
    const out: string[] = [];
    const io: CliIo = {
      stdout: (text) => out.push(text),
      stderr: () => {},
      env: { SCIM_BRIDGE_ADMIN_TOKEN: "t0k" },
      pollMs: 1,
      requestTimeoutMs: 20,
      fetch: (async (_input: string | URL, init?: RequestInit) => {
        if (init?.method === "POST")
          return new Response(JSON.stringify({ runId: "r1", state: "queued" }), { status: 202 });
        if (gets++ === 0) {
          // Never answers: only the request's own deadline ends it.
          return new Promise<Response>((_resolve, reject) => {
            init?.signal?.addEventListener("abort", () => reject(init.signal?.reason));
          });
        }
        return new Response(JSON.stringify(run("succeeded").body), { status: 200 });
      }) as typeof fetch,
    };
    expect(await runAdminCommand("reconcile", ["okta", "--dry-run", "--wait"], io)).toBe(0);
    expect(out.join("")).toContain("run r1 (okta): succeeded [dry run]");
    expect(gets).toBe(2);
  });
});

describe("reconcile --wait past its deadline", () => {
  it("a poll left unanswered is given up at the wait's deadline, not after the whole requestTimeoutMs", async () => {
    const err: string[] = [];
    let gets = 0;
    const io: CliIo = {
      stdout: () => {},
      stderr: (text) => err.push(text),
      env: { SCIM_BRIDGE_ADMIN_TOKEN: "t0k" },
      pollMs: 1,
      // The default a black-holed poll would hang for: far past this test's own timeout.
      requestTimeoutMs: 60_000,
      fetch: (async (_input: string | URL, init?: RequestInit) => {
        if (init?.method === "POST")
          return new Response(JSON.stringify({ runId: "r1", state: "queued" }), { status: 202 });
        if (gets++ === 0) return new Response(JSON.stringify(run("running").body), { status: 200 });
        return new Promise<Response>((_resolve, reject) => {
          init?.signal?.addEventListener("abort", () => reject(init.signal?.reason));
        });
      }) as typeof fetch,
    };
    const code = await runAdminCommand("reconcile", ["okta", "--wait", "--timeout-ms", "200"], io);
    expect(code).toBe(1);
    expect(err.join("")).toMatch(
      /timed out waiting for \/reconcile-runs\/r1 \(last: cannot reach .*no answer within/,
    );
  }, 5_000);
});
