/**
 * Probes k (the operator's surface): the CLI when it cannot talk to the bridge. An operator who
 * typed the wrong port, a host name that does not resolve, or an https:// URL to a plain HTTP port
 * must read why from the one line the CLI prints (and exit 1), not "fetch failed".
 */
import { createServer } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../helpers/admin-cli.js";
import { type TestBridge, startTestBridge } from "../helpers/bridge-harness.js";

let h: TestBridge;

/** A port nothing listens on (taken from the system, then released). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

beforeAll(async () => {
  h = await startTestBridge("probes-k-cli");
}, 30_000);
afterAll(async () => {
  await h?.close();
});

describe("probes k: the CLI says why it cannot reach the bridge", () => {
  it("a port nothing listens on: exit 1, 'connection refused', never a bare 'fetch failed'", async () => {
    const url = `http://127.0.0.1:${await closedPort()}`;
    const res = await runCli(url, ["status"]);
    expect(res.code).toBe(1);
    expect(res.stderr).toContain(`cannot reach ${url}`);
    expect(res.stderr).toMatch(/connection refused/i);
    expect(res.stderr).not.toMatch(/fetch failed\s*$/m);
  });

  it("a host name that does not resolve: exit 1, says the name was not found", async () => {
    const url = "http://scim-bridge.invalid:8080";
    const res = await runCli(url, ["status"]);
    expect(res.code).toBe(1);
    expect(res.stderr).toContain(`cannot reach ${url}`);
    expect(res.stderr).toMatch(/not found|not resolve/i);
  });

  it("https:// to the bridge's plain HTTP port: exit 1, and the reason is about TLS", async () => {
    const url = (h.bridge.url as string).replace(/^http:/, "https:");
    const res = await runCli(url, ["status"]);
    expect(res.code).toBe(1);
    expect(res.stderr).toContain(`cannot reach ${url}`);
    expect(res.stderr).not.toMatch(/fetch failed\s*$/m);
    expect(res.stderr).toMatch(/TLS|SSL|certificate|EPROTO/i);
  });

  it("a port Node's fetch refuses (6000, X11): exit 1, says the port is blocked and what to do", async () => {
    const url = "http://127.0.0.1:6000";
    const res = await runCli(url, ["status"]);
    expect(res.code).toBe(1);
    expect(res.stderr).toContain(`cannot reach ${url}`);
    expect(res.stderr).toMatch(/blocked ports/);
    expect(res.stderr).toMatch(/another port/);
  });

  it("a --url without http:// (host:port, a bare name) is a usage error (exit 2) naming the form, not 'cannot reach'", async () => {
    for (const url of [
      "127.0.0.1:8080",
      "localhost:8080",
      "bridge.example.com",
      "ftp://bridge.example.com",
    ]) {
      const res = await runCli(url, ["status"]);
      expect(res.code, url).toBe(2);
      expect(res.stderr, url).toContain("--url must be the bridge's http:// or https:// URL");
      expect(res.stderr, url).not.toContain("cannot reach");
    }
  });

  it("a --url pasted with the admin API's path (…/admin/v1) reaches the bridge", async () => {
    for (const suffix of ["/admin/v1", "/admin/v1/", "/"]) {
      const res = await runCli(`${h.bridge.url as string}${suffix}`, ["status"]);
      expect(res.stderr, suffix).toBe("");
      expect(res.code, suffix).toBe(0);
    }
  });

  it("a wrong admin token: exit 1 with the API's 401 and its message, nothing else needed", async () => {
    const res = await runCli(h.bridge.url as string, ["status"], { SCIM_BRIDGE_ADMIN_TOKEN: "not-a-token" });
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/401/);
    expect(res.stderr).not.toContain("not-a-token");
  });
});
