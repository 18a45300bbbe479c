import { describe, expect, it } from "vitest";
import { ADMIN_USAGE, type CliIo, runAdminCommand } from "../../../src/cli/admin-commands.js";

/** A CLI whose admin API answers GET /audit with `body`; the URLs it asked are kept. */
function cliAnswering(body: unknown) {
  const out: string[] = [];
  const asked: URL[] = [];
  const io: CliIo = {
    stdout: (text) => out.push(text),
    stderr: (text) => out.push(text),
    env: { SCIM_BRIDGE_ADMIN_TOKEN: "t0k" },
    fetch: (async (input: string | URL) => {
      const url = new URL(String(input));
      asked.push(url);
      const found = url.pathname === "/admin/v1/audit";
      return new Response(JSON.stringify(found ? body : { error: { code: "not_found", message: "no" } }), {
        status: found ? 200 : 404,
      });
    }) as typeof fetch,
  };
  return { io, out, asked };
}

const entry = (i: number, extra: Record<string, unknown> = {}) => ({
  at: `2026-11-28T01:0${i}:00.000Z`,
  actor: "ops-admin",
  role: "admin",
  action: "reconcile.trigger",
  target: "okta",
  outcome: "accepted",
  ...extra,
});

describe("scim-bridge audit", () => {
  it("prints the newest admin actions, one a line: when, who, what, on what, how it ended", async () => {
    const cli = cliAnswering({
      total: 2,
      items: [
        entry(2, { details: { dryRun: true } }),
        entry(1, { actor: "ops-viewer", role: "viewer", target: undefined, outcome: "refused" }),
      ],
    });
    expect(await runAdminCommand("audit", [], cli.io)).toBe(0);
    expect(cli.out.join("")).toBe(
      [
        "2026-11-28T01:02:00.000Z  ops-admin (admin)  reconcile.trigger  okta  accepted  dryRun=true",
        "2026-11-28T01:01:00.000Z  ops-viewer (viewer)  reconcile.trigger  -  refused",
        "",
      ].join("\n"),
    );
    expect(cli.asked[0]?.search).toBe("");
  });

  it("says when nothing is recorded, and when it shows the newest page of more", async () => {
    const none = cliAnswering({ total: 0, items: [] });
    expect(await runAdminCommand("audit", [], none.io)).toBe(0);
    expect(none.out.join("")).toBe("no admin actions recorded\n");
    const page = cliAnswering({ total: 40, items: [entry(2), entry(1)] });
    expect(await runAdminCommand("audit", ["--limit", "2"], page.io)).toBe(0);
    expect(page.asked[0]?.search).toBe("?limit=2");
    expect(page.out.join("")).toMatch(/\n\(the newest 2 of 40\)\n$/);
  });

  it("--json prints the API's answer as it is", async () => {
    const body = { total: 1, items: [entry(1)] };
    const cli = cliAnswering(body);
    expect(await runAdminCommand("audit", ["--json"], cli.io)).toBe(0);
    expect(JSON.parse(cli.out.join(""))).toEqual(body);
  });

  it("refuses a bad --limit, an argument or another command's option before any request (exit 2)", async () => {
    for (const args of [
      ["--limit", "0"],
      ["--limit", "501"],
      ["--limit", "ten"],
      ["okta"],
      ["--source", "okta"],
    ]) {
      const cli = cliAnswering({ total: 0, items: [] });
      expect(await runAdminCommand("audit", args, cli.io), args.join(" ")).toBe(2);
      expect(cli.asked).toEqual([]);
      expect(cli.out.join("")).toContain("scim-bridge audit [--limit N]");
    }
    expect(ADMIN_USAGE).toContain("audit [--limit N]");
  });

  it("an answer without items is an error (exit 1), never printed as undefined", async () => {
    const cli = cliAnswering({ total: 3 });
    expect(await runAdminCommand("audit", [], cli.io)).toBe(1);
    expect(cli.out.join("")).toMatch(/unexpected answer from \/audit/);
  });
});
