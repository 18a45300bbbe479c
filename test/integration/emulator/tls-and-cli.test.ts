import { type ChildProcess, spawn } from "node:child_process";
import { X509Certificate } from "node:crypto";
import { request } from "node:https";
import { afterEach, describe, expect, it } from "vitest";
import { createPlatformEmulator } from "../../../src/platform/emulator/platform-emulator.js";

function httpsGet(url: string, ca: string | undefined): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { ca, headers: { authorization: "Bearer t" } }, (res) => {
      let body = "";
      res.on("data", (chunk) => {
        body += chunk;
      });
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on("error", reject);
    req.end();
  });
}

let child: ChildProcess | undefined;
afterEach(() => {
  if (child?.pid && child.exitCode === null && child.signalCode === null) {
    try {
      process.kill(-child.pid, "SIGKILL");
    } catch {
      // already gone
    }
  }
  child = undefined;
});

describe("emulator: TLS", () => {
  it("serves HTTPS with a self-signed certificate a client can trust", async () => {
    const emulator = createPlatformEmulator({ token: "t", tls: true });
    const url = await emulator.start();
    expect(url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    const cert = new X509Certificate(emulator.certificatePem ?? "");
    expect(cert.subjectAltName).toContain("IP Address:127.0.0.1");
    expect(cert.checkIP("127.0.0.1")).toBe("127.0.0.1");
    const res = await httpsGet(`${url}/api/v1/user-attributes/`, emulator.certificatePem);
    expect(res).toEqual({ status: 200, body: '{"items":[]}' });
    await expect(httpsGet(`${url}/api/v1/user-attributes/`, undefined)).rejects.toThrow(
      /self.signed|certificate/i,
    );
    await emulator.close();
    await emulator.close();
  });
});

describe("emulator: CLI", () => {
  it("prints its URL, answers requests, and stops on SIGTERM", async () => {
    child = spawn("npx", ["tsx", "src/cli/main.ts", "emulator", "--port", "0", "--token", "t"], {
      stdio: ["ignore", "pipe", "pipe"],
      detached: true, // its own process group: npx does not pass SIGTERM on, so signal the whole group
    });
    const proc = child;
    const url = await new Promise<string>((resolve, reject) => {
      let out = "";
      const timer = setTimeout(() => reject(new Error(`no URL line; got: ${out}`)), 20_000);
      proc.stdout?.on("data", (chunk) => {
        out += chunk;
        const match = /platform emulator listening on (http:\/\/\S+)\n/.exec(out);
        if (match?.[1]) {
          clearTimeout(timer);
          resolve(match[1]);
        }
      });
      proc.on("exit", (code) => reject(new Error(`exited ${code}`)));
    });
    const res = await fetch(`${url}/api/v1/embed-tenants/`, { headers: { authorization: "Bearer t" } });
    expect(res.status).toBe(200);
    expect((await fetch(`${url}/api/v1/embed-tenants/`)).status).toBe(401);
    const exited = new Promise<void>((resolve) => proc.on("exit", () => resolve()));
    process.kill(-(proc.pid ?? 0), "SIGTERM");
    await exited;
    // The emulator itself stopped listening (not just the npx wrapper).
    const deadline = Date.now() + 10_000;
    let stillUp = true;
    while (stillUp && Date.now() < deadline) {
      stillUp = await fetch(`${url}/api/v1/embed-tenants/`).then(
        () => true,
        () => false,
      );
      if (stillUp) await new Promise((r) => setTimeout(r, 100));
    }
    expect(stillUp).toBe(false);
  });
});
