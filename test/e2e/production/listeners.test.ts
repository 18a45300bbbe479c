import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Router } from "express";
import supertest from "supertest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type AdminRouters, type RunningBridge, startBridge } from "../../../src/bridge.js";
import { buildConfig } from "../../../src/config/load-config.js";
import { createLogger } from "../../../src/observability/logger.js";
import { selfSignedCertificate } from "../../../src/platform/emulator/self-signed-cert.js";
import { type TestBridge, USER_SCHEMA, startTestBridge } from "../../helpers/bridge-harness.js";
import { waitFor } from "../../helpers/redis-test-prefix.js";
import { call } from "./bridge-process.js";

/** Stand-ins for the admin API and Bull Board: whatever the bridge mounts, it mounts here. */
function standInAdminRouters(): AdminRouters {
  const admin = Router();
  admin.get("/whoami", (_req, res) => {
    res.json({ router: "admin" });
  });
  const queues = Router();
  queues.get("/", (_req, res) => {
    res.json({ router: "queues" });
  });
  return { admin, queues };
}

const logger = createLogger("silent");

/**
 * Hardening (issue 7): TLS in the process from a certificate and key file, and the admin API
 * optionally on a port of its own (`admin.port`): then only there, never on the intake's port.
 */
describe("TLS and the admin port", () => {
  const dir = mkdtempSync(join(tmpdir(), "bridge-tls-"));
  const cert = selfSignedCertificate({ commonName: "scim-bridge test", hosts: ["127.0.0.1", "localhost"] });
  let t: TestBridge;
  let bridge: RunningBridge;

  beforeAll(async () => {
    writeFileSync(join(dir, "cert.pem"), cert.certPem);
    writeFileSync(join(dir, "key.pem"), cert.keyPem, { mode: 0o600 });
    t = await startTestBridge("listeners", { start: false });
    const config = buildConfig({
      ...structuredClone(t.config),
      admin: { ...t.config.admin, port: 0 },
      server: { ...t.config.server, tls: { cert: join(dir, "cert.pem"), key: join(dir, "key.pem") } },
    });
    bridge = await startBridge(config, { role: "all", logger, adminRouters: standInAdminRouters() });
  });

  afterAll(async () => {
    await bridge?.close();
    await t?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const https = (url: string) => ({
    get: (path: string) => supertest(url).get(path).ca(cert.certPem),
    post: (path: string) => supertest(url).post(path).ca(cert.certPem),
  });

  it("serves SCIM over HTTPS with the given certificate, and the change reaches the platform", async () => {
    expect(bridge.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    const main = https(bridge.url!);
    await main.get("/healthz").expect(200);
    const res = await main
      .post("/scim/v2/okta/Users")
      .set({ Authorization: "Bearer okta-token", "Content-Type": "application/scim+json" })
      .send({ schemas: [USER_SCHEMA], userName: "tls.user@example.com", active: true })
      .expect(201);
    expect(res.body.userName).toBe("tls.user@example.com");
    await waitFor(() => t.platformUsers().has("tls.user@example.com"), { what: "the user on the platform" });
  });

  it("does not speak plain HTTP on the TLS port, and is refused by a client that does not trust the certificate", async () => {
    const port = Number(new URL(bridge.url!).port);
    const plain = await call(port, { path: "/healthz" });
    expect(plain.kind === "answer" && plain.status < 400).toBe(false);
    await expect(supertest(bridge.url!).get("/healthz")).rejects.toThrow(/self.signed|certificate/i);
  });

  it("serves the admin API and Bull Board only on the admin port, with /healthz and /readyz there too", async () => {
    expect(bridge.adminUrl).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    expect(bridge.adminUrl).not.toBe(bridge.url);
    const admin = https(bridge.adminUrl!);
    expect((await admin.get("/admin/v1/whoami").expect(200)).body).toEqual({ router: "admin" });
    expect((await admin.get("/admin/queues/").expect(200)).body).toEqual({ router: "queues" });
    await admin.get("/healthz").expect(200);
    await admin.get("/readyz").expect(200);
    // The intake is not on the admin port...
    await admin.get("/scim/v2/okta/Users").set({ Authorization: "Bearer okta-token" }).expect(404);
    // ...and the admin API is not on the intake's port.
    const main = https(bridge.url!);
    await main.get("/admin/v1/whoami").expect(404);
    await main.get("/admin/queues/").expect(404);
  });
});

describe("without admin.port", () => {
  let t: TestBridge;
  let bridge: RunningBridge;

  beforeAll(async () => {
    t = await startTestBridge("listeners-one-port", { start: false });
    bridge = await startBridge(t.config, { role: "api", logger, adminRouters: standInAdminRouters() });
  });

  afterAll(async () => {
    await bridge?.close();
    await t?.close();
  });

  it("serves the admin API and Bull Board on the main port", async () => {
    expect(bridge.adminUrl).toBeUndefined();
    expect((await supertest(bridge.url!).get("/admin/v1/whoami").expect(200)).body).toEqual({
      router: "admin",
    });
    expect((await supertest(bridge.url!).get("/admin/queues/").expect(200)).body).toEqual({
      router: "queues",
    });
  });
});
