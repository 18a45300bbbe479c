import { describe, expect, it } from "vitest";
import { type CliIo, runAdminCommand } from "../../../src/cli/admin-commands.js";

type Route = (init: { method: string; body?: unknown; url: URL }) => { status: number; body: unknown };

function fakeIo(
  routes: Record<string, Route>,
  env: Record<string, string> = { SCIM_BRIDGE_ADMIN_TOKEN: "t0k" },
) {
  const out: string[] = [];
  const err: string[] = [];
  const calls: Array<{ method: string; url: string; auth: string | null; body?: unknown }> = [];
  const io: CliIo = {
    stdout: (text) => out.push(text),
    stderr: (text) => err.push(text),
    env,
    pollMs: 1,
    fetch: (async (input: string | URL, init?: RequestInit) => {
      const url = String(input);
      const method = init?.method ?? "GET";
      const body = init?.body ? JSON.parse(String(init.body)) : undefined;
      calls.push({ method, url, auth: new Headers(init?.headers).get("authorization"), body });
      const path = new URL(url).pathname.replace("/admin/v1", "");
      const route = routes[`${method} ${path}`];
      const answer = route
        ? route({ method, body, url: new URL(url) })
        : { status: 404, body: { error: { code: "not_found", message: "no" } } };
      return new Response(JSON.stringify(answer.body), { status: answer.status });
    }) as typeof fetch,
  };
  return { io, out, err, calls };
}

describe("runAdminCommand", () => {
  it("status: exit 0 when idle, 1 when not, with the token as a bearer", async () => {
    for (const idle of [true, false]) {
      const { io, out, calls } = fakeIo({
        "GET /status": () => ({
          status: 200,
          body: { idle, pending: idle ? 0 : 3, deadLetters: 0, queues: {}, sources: {} },
        }),
      });
      expect(await runAdminCommand("status", ["--url", "http://bridge:9000"], io)).toBe(idle ? 0 : 1);
      expect(calls[0]).toMatchObject({ url: "http://bridge:9000/admin/v1/status", auth: "Bearer t0k" });
      expect(out.join("")).toContain(`idle: ${idle}`);
    }
  });

  it("status names what waits for an admin's confirmation, and says none when nothing does", async () => {
    const answer = (awaitingConfirmation: unknown[]) =>
      fakeIo({
        "GET /status": () => ({
          status: 200,
          body: { idle: true, pending: 0, deadLetters: 0, queues: {}, sources: {}, awaitingConfirmation },
        }),
      });
    const held = answer([
      { kind: "reconcile", id: "r1", source: "okta", plannedDeprovisions: 3, ownedUsers: 20 },
      { kind: "resync", id: "s1", source: "entra" },
    ]);
    expect(await runAdminCommand("status", [], held.io)).toBe(0);
    const text = held.out.join("");
    expect(text).toContain("awaiting confirmation:\n  reconcile r1 (okta): 3 of 20 users to deprovision;");
    expect(text).toContain("scim-bridge reconcile --show r1");
    expect(text).toContain("  resync s1 (entra); scim-bridge resync --show s1");
    const none = answer([]);
    await runAdminCommand("status", [], none.io);
    expect(none.out.join("")).toContain("awaiting confirmation: none");
  });

  it("defaults the URL to 127.0.0.1 and PORT, and prints JSON with --json", async () => {
    const { io, out, calls } = fakeIo(
      { "GET /status": () => ({ status: 200, body: { idle: true, pending: 0 } }) },
      { PORT: "8181" },
    );
    expect(await runAdminCommand("status", ["--json", "--token", "x"], io)).toBe(0);
    expect(calls[0]?.url).toBe("http://127.0.0.1:8181/admin/v1/status");
    expect(JSON.parse(out.join(""))).toEqual({ idle: true, pending: 0 });
  });

  it("exits 2 on usage errors: no token, unknown flag, missing source", async () => {
    expect(await runAdminCommand("status", [], fakeIo({}, {}).io)).toBe(2);
    expect(await runAdminCommand("status", ["--nope"], fakeIo({}).io)).toBe(2);
    expect(await runAdminCommand("reconcile", [], fakeIo({}).io)).toBe(2);
    expect(await runAdminCommand("dead-letters", ["discard", "bad-ref"], fakeIo({}).io)).toBe(2);
  });

  it("exits 1 with the API's error on a refused request", async () => {
    const { io, err } = fakeIo({
      "POST /sources/okta/reconcile": () => ({
        status: 403,
        body: { error: { code: "forbidden", message: "needs admin" } },
      }),
    });
    expect(await runAdminCommand("reconcile", ["okta"], io)).toBe(1);
    expect(err.join("")).toContain("403 forbidden: needs admin");
  });

  it("reconcile --dry-run --wait polls the run and exits 1 when it waits for confirmation", async () => {
    let polls = 0;
    const { io, out, calls } = fakeIo({
      "POST /sources/okta/reconcile": () => ({ status: 202, body: { runId: "r1" } }),
      "GET /reconcile-runs/r1": () => ({
        status: 200,
        body: {
          runId: "r1",
          source: "okta",
          state: ++polls < 3 ? "running" : "awaiting-confirmation",
          dryRun: false,
          counts: { orphans: 2 },
          guard: { plannedDeprovisions: 5, ownedUsers: 10, tripped: true },
        },
      }),
    });
    expect(await runAdminCommand("reconcile", ["okta", "--dry-run", "--wait"], io)).toBe(1);
    expect(calls[0]?.body).toEqual({ dryRun: true });
    expect(polls).toBe(3);
    expect(out.join("")).toContain("awaiting-confirmation");
    expect(out.join("")).toContain("guard: 5 of 10 owned users (tripped)");
  });

  it("resync sends the named users and groups", async () => {
    const { io, calls } = fakeIo({
      "POST /sources/okta/resync": () => ({ status: 202, body: { id: "op1", state: "queued" } }),
    });
    expect(
      await runAdminCommand("resync", ["okta", "--user", "u1", "--user", "u2", "--group", "g1"], io),
    ).toBe(0);
    expect(calls[0]?.body).toEqual({ users: ["u1", "u2"], groups: ["g1"] });
  });

  it("dead-letters retry names references, discard deletes one", async () => {
    const { io, calls } = fakeIo({
      "POST /dead-letters/retry": () => ({ status: 202, body: { retried: 1 } }),
      "DELETE /dead-letters/okta/user/u9": () => ({ status: 200, body: { discarded: true } }),
    });
    expect(await runAdminCommand("dead-letters", ["retry", "okta/user/u1"], io)).toBe(0);
    expect(calls[0]?.body).toEqual({ refs: [{ source: "okta", kind: "user", id: "u1" }] });
    expect(await runAdminCommand("dead-letters", ["discard", "okta/user/u9"], io)).toBe(0);
    expect(calls[1]?.method).toBe("DELETE");
  });

  it("dead-letters discard of a deleted entity's letter says its platform object was let go, an orphan now", async () => {
    const { io, out } = fakeIo({
      "DELETE /dead-letters/okta/user/gone": () => ({
        status: 200,
        body: { discarded: true, released: true },
      }),
      "DELETE /dead-letters/okta/user/live": () => ({ status: 200, body: { discarded: true } }),
    });
    expect(await runAdminCommand("dead-letters", ["discard", "okta/user/gone"], io)).toBe(0);
    const released = out.join("");
    expect(released).toContain("discarded okta/user/gone");
    expect(released).toMatch(/platform object was let go/);
    expect(released).toMatch(/orphan/);
    out.length = 0;
    expect(await runAdminCommand("dead-letters", ["discard", "okta/user/live"], io)).toBe(0);
    expect(out.join("")).toBe("discarded okta/user/live\n");
  });

  it("dead-letters discard of a deleted group's letter does not promise an orphan report (only users are orphans)", async () => {
    const { io, out } = fakeIo({
      "DELETE /dead-letters/okta/group/gone": () => ({
        status: 200,
        body: { discarded: true, released: true },
      }),
    });
    expect(await runAdminCommand("dead-letters", ["discard", "okta/group/gone"], io)).toBe(0);
    const released = out.join("");
    expect(released).toContain("released: its platform group stays on the platform");
    expect(released).not.toMatch(/reports it as an orphan/);
    expect(released).toMatch(/does not report groups as orphans/);
  });

  it("dead-letters list reads every page, not only the first 500", async () => {
    const letters = Array.from({ length: 1_234 }, (_, i) => ({
      ref: { source: "okta", kind: "user", id: `u${i}` },
      code: "platform_conflict",
      reason: "409",
      at: "2026-11-27T00:00:00.000Z",
    }));
    const { io, out, calls } = fakeIo({
      "GET /dead-letters": ({ url }) => {
        const offset = Number(url.searchParams.get("offset") ?? 0);
        const limit = Number(url.searchParams.get("limit") ?? 50);
        expect(url.searchParams.get("source")).toBe("okta");
        return { status: 200, body: { total: letters.length, items: letters.slice(offset, offset + limit) } };
      },
    });
    expect(await runAdminCommand("dead-letters", ["list", "--source", "okta"], io)).toBe(0);
    const text = out.join("");
    expect(text).toContain("1234 dead letter(s)");
    expect(text).toContain("okta/user/u0  platform_conflict");
    expect(text).toContain("okta/user/u1233  platform_conflict");
    expect(calls).toHaveLength(6); // the total, three pages, then the newest end again (total, a page)

    // Letters go while the pages are read (their entities synced): none of the rest is skipped.
    const stored = letters.slice(0, 1_200);
    let pagesRead = 0;
    const json = fakeIo({
      "GET /dead-letters": ({ url }) => {
        const offset = Number(url.searchParams.get("offset") ?? 0);
        const limit = Number(url.searchParams.get("limit") ?? 50);
        const body = { total: stored.length, items: stored.slice(offset, offset + limit) };
        if (limit > 1 && pagesRead++ === 0) stored.splice(10, 1); // one of the oldest goes
        if (pagesRead === 2) stored.splice(1_000, 1); // one of the newest, already read, goes
        if (pagesRead === 2 && offset > 0) {
          // One of the oldest, not read yet, fails again: written anew, it moves to the newest end.
          const [moved] = stored.splice(5, 1);
          if (moved) stored.push({ ...moved, at: "2026-11-27T01:00:00.000Z" });
        }
        return { status: 200, body };
      },
    });
    expect(await runAdminCommand("dead-letters", ["list", "--json"], json.io)).toBe(0);
    const listed = JSON.parse(json.out.join("")) as { total: number; items: Array<{ ref: { id: string } }> };
    const ids = listed.items.map((d) => d.ref.id);
    expect(new Set(ids).size).toBe(ids.length);
    // Every letter still there at the end is listed, oldest first (the one written again last).
    expect(ids.filter((id) => stored.some((d) => d.ref.id === id))).toEqual(stored.map((d) => d.ref.id));
    expect(ids.at(-1)).toBe("u5");
  });

  it("status prints every queue's depth by state in its human form", async () => {
    const { io, out } = fakeIo({
      "GET /status": () => ({
        status: 200,
        body: {
          idle: false,
          pending: 2,
          deadLetters: 1,
          queues: { sync: { waiting: 4, active: 1, failed: 1 }, lifecycle: { waiting: 0 } },
          sources: { okta: { users: 3, groups: 1, deadLetters: 1 } },
        },
      }),
    });
    expect(await runAdminCommand("status", [], io)).toBe(1);
    const text = out.join("");
    expect(text).toContain("sync: waiting 4, active 1, failed 1");
    expect(text).toContain("lifecycle: waiting 0");
    expect(text).toContain("okta: 3 users, 1 groups, 1 dead letters");
  });

  it("a late write whose time has passed is said to be read again now, never 'checked by' a past time", async () => {
    const past = "2026-01-01T00:00:00.000Z";
    const future = new Date(Date.now() + 3_600_000).toISOString();
    for (const [until, said] of [
      [past, "late writes: 2 may still land on the platform (their time is up: read again now)"],
      [future, `late writes: 2 may still land on the platform (checked by ${future})`],
    ] as const) {
      const { io, out } = fakeIo({
        "GET /status": () => ({
          status: 200,
          body: {
            idle: false,
            pending: 2,
            deadLetters: 0,
            queues: {},
            sources: {},
            lateWrites: { count: 2, until },
          },
        }),
      });
      await runAdminCommand("status", [], io);
      expect(out.join("")).toContain(said);
    }
    for (const [until, said] of [
      [past, "late write:   its time is up: read again now"],
      [future, `late write:   may still land; waits until ${future}`],
    ] as const) {
      const { io, out } = fakeIo({
        "GET /sources/okta/users/u1": () => ({
          status: 200,
          body: {
            source: "okta",
            kind: "user",
            id: "u1",
            state: "pending",
            lateWriteUntil: until,
            lastError: null,
          },
        }),
      });
      await runAdminCommand("status", ["okta/user/u1"], io);
      expect(out.join("")).toContain(said);
    }
  });

  it("status SOURCE/KIND/ID shows one entity's sync status: exit 0 when synced, 1 with its error when not", async () => {
    const synced = fakeIo({
      "GET /sources/okta/users/u1": () => ({
        status: 200,
        body: {
          source: "okta",
          kind: "user",
          id: "u1",
          state: "synced",
          platformId: "p1",
          generation: 2,
          lastApplied: { generation: 2, at: "2026-01-01T00:00:00.000Z" },
          lastError: null,
        },
      }),
    });
    expect(await runAdminCommand("status", ["okta/user/u1"], synced.io)).toBe(0);
    expect(synced.out.join("")).toContain("okta/user/u1: synced");
    expect(synced.out.join("")).toContain("p1");

    const dead = fakeIo({
      "GET /sources/okta/groups/g1": () => ({
        status: 200,
        body: {
          source: "okta",
          kind: "group",
          id: "g1",
          state: "dead",
          platformId: null,
          lastApplied: null,
          lastError: { code: "ownership_conflict", message: "owned by entra", at: "t" },
        },
      }),
    });
    expect(await runAdminCommand("status", ["okta/group/g1"], dead.io)).toBe(1);
    const text = dead.out.join("");
    expect(text).toContain("ownership_conflict owned by entra");
    expect(text).toContain("scim-bridge dead-letters retry okta/group/g1");
    expect(await runAdminCommand("status", ["okta/person/x"], fakeIo({}).io)).toBe(2);
  });

  it("a run or a resync held by the guard says how to confirm or discard it", async () => {
    const run = fakeIo({
      "GET /reconcile-runs/r1": () => ({
        status: 200,
        body: { runId: "r1", source: "okta", state: "awaiting-confirmation", dryRun: false, counts: {} },
      }),
    });
    await runAdminCommand("reconcile", ["--show", "r1"], run.io);
    expect(run.out.join("")).toContain("scim-bridge reconcile --confirm r1");

    const op = fakeIo({
      "POST /sources/okta/resync": () => ({ status: 202, body: { id: "op1", state: "queued" } }),
      "GET /resyncs/op1": () => ({
        status: 200,
        body: {
          id: "op1",
          source: "okta",
          state: "awaiting-confirmation",
          total: 3,
          enqueued: 0,
          unknown: [],
          guard: { plannedDeprovisions: 1, ownedUsers: 3, tripped: true },
        },
      }),
    });
    expect(await runAdminCommand("resync", ["okta", "--wait"], op.io)).toBe(1);
    expect(op.out.join("")).toContain("guard: 1 of 3 owned users (tripped)");
    expect(op.out.join("")).toContain("scim-bridge resync --confirm op1");
  });

  it("resync --confirm, --discard, --show and --list settle and read resync operations", async () => {
    const settled = (state: string) => () => ({
      status: 200,
      body: { id: "op1", source: "okta", state, total: 3, enqueued: 0, unknown: [] },
    });
    const { io, out, calls } = fakeIo({
      "POST /resyncs/op1/confirm": settled("queued"),
      "POST /resyncs/op1/discard": settled("discarded"),
      "GET /resyncs/op1": settled("succeeded"),
      "GET /resyncs": () => ({
        status: 200,
        body: { total: 1, items: [{ id: "op1", source: "okta", state: "succeeded", createdAt: "t" }] },
      }),
    });
    expect(await runAdminCommand("resync", ["--confirm", "op1"], io)).toBe(0);
    expect(await runAdminCommand("resync", ["--discard", "op1"], io)).toBe(0);
    expect(await runAdminCommand("resync", ["--show", "op1"], io)).toBe(0);
    expect(await runAdminCommand("resync", ["--list", "--source", "okta"], io)).toBe(0);
    expect(calls.map((c) => `${c.method} ${new URL(c.url).pathname}${new URL(c.url).search}`)).toEqual([
      "POST /admin/v1/resyncs/op1/confirm",
      "POST /admin/v1/resyncs/op1/discard",
      "GET /admin/v1/resyncs/op1",
      "GET /admin/v1/resyncs?source=okta",
    ]);
    expect(out.join("")).toContain("resync op1 (okta): discarded");
    expect(await runAdminCommand("resync", [], fakeIo({}).io)).toBe(2);
  });

  it("dead-letters retry of a named reference that is no dead letter says so and exits 1", async () => {
    const { io, out } = fakeIo({
      "POST /dead-letters/retry": () => ({ status: 202, body: { retried: 1 } }),
    });
    expect(await runAdminCommand("dead-letters", ["retry", "okta/user/u1", "okta/user/typo"], io)).toBe(1);
    expect(out.join("")).toContain("retried 1 of 2 named");
    const all = fakeIo({ "POST /dead-letters/retry": () => ({ status: 202, body: { retried: 0 } }) });
    expect(await runAdminCommand("dead-letters", ["retry"], all.io)).toBe(0);
  });
});

describe("runAdminCommand: a typo never does more than asked", () => {
  const usageError = async (command: string, args: string[], named?: string) => {
    const { io, err, calls } = fakeIo({});
    expect(await runAdminCommand(command, args, io), args.join(" ")).toBe(2);
    expect(calls, args.join(" ")).toEqual([]);
    if (named) expect(err.join("")).toContain(named);
    return err.join("");
  };

  it("an option of another command is a usage error naming it and the command's usage, before any request", async () => {
    const text = await usageError("resync", ["alpha", "--dry-run"], "--dry-run");
    expect(text).toContain("scim-bridge resync SOURCE");
    expect(text).not.toContain("dead-letters");
    await usageError("dead-letters", ["retry", "--dry-run"], "--dry-run");
    await usageError("dead-letters", ["retry", "okta/user/u1", "--source", "okta"], "--source");
    await usageError("reconcile", ["alpha", "--user", "x"], "--user");
    await usageError("reconcile", ["alpha", "--group", "x"], "--group");
    await usageError("status", ["--wait"], "--wait");
    await usageError("status", ["okta/user/u1", "--source", "okta"], "--source");
    await usageError("dead-letters", ["discard", "okta/user/u1", "--wait"], "--wait");
    await usageError("resync", ["--show", "op1", "--wait"], "--wait");
    await usageError("resync", ["--confirm", "op1", "--user", "u1"], "--user");
    await usageError("reconcile", ["--list", "--dry-run"], "--dry-run");
    await usageError("reconcile", ["alpha", "--source", "beta"], "--source");
    await usageError("resync", ["alpha", "--timeout-ms", "5"], "--timeout-ms");
  });

  it("positional arguments where none or fewer are taken are a usage error", async () => {
    await usageError("dead-letters", ["list", "extra", "args"], "extra");
    await usageError("dead-letters", ["discard", "okta/user/u1", "okta/user/u2"]);
    await usageError("resync", ["alpha", "beta"], "beta");
    await usageError("reconcile", ["--show", "r1", "alpha"], "alpha");
    await usageError("reconcile", ["--confirm", "r1", "--discard", "r1"], "--discard");
    await usageError("status", ["okta/user/u1", "okta/user/u2"]);
    await usageError("resync", [""]);
    await usageError("reconcile", ["--show", ""], "--show");
  });

  it("--timeout-ms takes a positive whole number of milliseconds", async () => {
    for (const bad of ["abc", "0", "-5", "1.5", "", "1e3"])
      await usageError("reconcile", ["alpha", "--wait", `--timeout-ms=${bad}`], "--timeout-ms");
    let polls = 0;
    const { io, err } = fakeIo({
      "POST /sources/alpha/reconcile": () => ({ status: 202, body: { runId: "r1", state: "queued" } }),
      "GET /reconcile-runs/r1": () => ({ status: 200, body: { runId: "r1", state: "running", n: ++polls } }),
    });
    expect(await runAdminCommand("reconcile", ["alpha", "--wait", "--timeout-ms", "20"], io)).toBe(1);
    expect(err.join("")).toContain("timed out");
  });

  it("a reference with an empty part is a usage error, not a request", async () => {
    await usageError("status", ["alpha/user/"], "alpha/user/");
    await usageError("status", ["/user/u1"]);
    await usageError("dead-letters", ["retry", "alpha/group/"]);
  });

  it("ids are encoded as one path segment each; an answer of another shape is an error, not undefined", async () => {
    const status = () => ({ status: 200, body: { idle: true, pending: 0 } });
    const show = fakeIo({ "GET /status": status });
    expect(await runAdminCommand("reconcile", ["--show", "../status"], show.io)).toBe(1);
    expect(show.calls.map((c) => c.url)).toEqual([
      "http://127.0.0.1:8080/admin/v1/reconcile-runs/..%2Fstatus",
    ]);
    expect(show.out.join("")).not.toContain("undefined");

    const discard = fakeIo({ "POST /dead-letters/retry": () => ({ status: 202, body: { retried: 7 } }) });
    expect(await runAdminCommand("resync", ["--discard", "../dead-letters/retry#"], discard.io)).toBe(1);
    expect(discard.calls.map((c) => c.url)).toEqual([
      "http://127.0.0.1:8080/admin/v1/resyncs/..%2Fdead-letters%2Fretry%23/discard",
    ]);

    const dl = fakeIo({
      "DELETE /dead-letters/a%20b/user/u%2F1": () => ({ status: 200, body: { discarded: true } }),
    });
    expect(await runAdminCommand("dead-letters", ["discard", "a b/user/u/1"], dl.io)).toBe(0);

    // A 200 that is not a run (a proxy's page, another route) is an error (exit 1).
    const odd = fakeIo({ "GET /reconcile-runs/r1": status });
    expect(await runAdminCommand("reconcile", ["--show", "r1"], odd.io)).toBe(1);
    expect(odd.out.join("")).toBe("");
    expect(odd.err.join("")).toMatch(/unexpected answer/);
    const noId = fakeIo({ "POST /sources/okta/resync": () => ({ status: 202, body: {} }) });
    expect(await runAdminCommand("resync", ["okta", "--wait"], noId.io)).toBe(1);
    expect(noId.calls).toHaveLength(1);
  });
});
