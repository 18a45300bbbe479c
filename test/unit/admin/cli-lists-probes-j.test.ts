import { describe, expect, it } from "vitest";
import { type CliIo, runAdminCommand } from "../../../src/cli/admin-commands.js";

/** A CLI whose admin API answers every GET of `path` with `body`. */
function cliAnswering(path: string, body: unknown) {
  const out: string[] = [];
  const io: CliIo = {
    stdout: (text) => out.push(text),
    stderr: (text) => out.push(text),
    env: { SCIM_BRIDGE_ADMIN_TOKEN: "t0k" },
    fetch: (async (input: string | URL) => {
      const found = new URL(String(input)).pathname === `/admin/v1${path}`;
      return new Response(JSON.stringify(found ? body : { error: { code: "not_found", message: "no" } }), {
        status: found ? 200 : 404,
      });
    }) as typeof fetch,
  };
  return { io, out };
}

const run = (i: number) => ({
  runId: `r${i}`,
  source: "okta",
  state: "succeeded",
  dryRun: false,
  createdAt: `t${i}`,
});

describe("reconcile --list and resync --list", () => {
  it("say so when there is nothing to list, instead of printing a blank line", async () => {
    const runs = cliAnswering("/reconcile-runs", { total: 0, items: [] });
    expect(await runAdminCommand("reconcile", ["--list"], runs.io)).toBe(0);
    expect(runs.out.join("")).toBe("no reconciliation runs\n");
    const resyncs = cliAnswering("/resyncs", { total: 0, items: [] });
    expect(await runAdminCommand("resync", ["--list", "--source", "okta"], resyncs.io)).toBe(0);
    expect(resyncs.out.join("")).toBe("no resyncs of source okta\n");
  });

  it("say when they show the newest page of more", async () => {
    const page = cliAnswering("/reconcile-runs", { total: 120, items: [run(2), run(1)] });
    expect(await runAdminCommand("reconcile", ["--list"], page.io)).toBe(0);
    expect(page.out.join("")).toBe(
      "r2  okta  succeeded  t2\nr1  okta  succeeded  t1\n(the newest 2 of 120)\n",
    );
    const all = cliAnswering("/reconcile-runs", { total: 1, items: [run(1)] });
    expect(await runAdminCommand("reconcile", ["--list"], all.io)).toBe(0);
    expect(all.out.join("")).toBe("r1  okta  succeeded  t1\n");
  });

  it("--json prints the API's answer as it is, empty or not", async () => {
    const runs = cliAnswering("/reconcile-runs", { total: 0, items: [] });
    expect(await runAdminCommand("reconcile", ["--list", "--json"], runs.io)).toBe(0);
    expect(JSON.parse(runs.out.join(""))).toEqual({ total: 0, items: [] });
  });
});
