/**
 * `scim-bridge audit` against the admin API's real /audit route and the audit log in Redis: the
 * newest actions first, --limit passed on, and the viewer role enough to read them.
 */
import type { AddressInfo } from "node:net";
import express from "express";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createAdminRouter } from "../../../routes/admin/admin-router.js";
import { AdminPrincipals } from "../../../src/admin/admin-principals.js";
import type { AdminService } from "../../../src/admin/admin-service.js";
import { AuditLog } from "../../../src/admin/audit-log.js";
import { type CliIo, runAdminCommand } from "../../../src/cli/admin-commands.js";
import { createLogger } from "../../../src/observability/logger.js";
import { TEST_REDIS_URL, deleteKeys, testPrefix } from "../../helpers/redis-test-prefix.js";

const VIEWER = "cli-audit-n-viewer";

describe("scim-bridge audit against the admin API", () => {
  const prefix = testPrefix("cli-audit-n");
  let redis: Redis;
  let server: ReturnType<express.Express["listen"]>;
  let url: string;

  beforeAll(async () => {
    redis = new Redis(TEST_REDIS_URL);
    const audit = new AuditLog(redis, prefix);
    for (const [i, action] of ["reconcile.trigger", "resync.trigger", "dead-letters.retry"].entries()) {
      await audit.record({
        at: `2026-11-28T01:0${i}:00.000Z`,
        actor: "ops-admin",
        role: "admin",
        action,
        target: "okta",
        outcome: "accepted",
      });
    }
    // Only the route under test reaches the service: /audit reads the log.
    const service = { listAudit: (query: { offset: number; limit: number }) => audit.list(query) };
    const app = express();
    app.use(
      "/admin/v1",
      createAdminRouter({
        service: service as unknown as AdminService,
        audit,
        principals: new AdminPrincipals({
          admin: { tokens: [{ token: VIEWER, role: "viewer", name: "ops-viewer" }] },
          sources: {},
        } as never),
        logger: createLogger("silent"),
      }),
    );
    server = app.listen(0, "127.0.0.1");
    await new Promise((resolve) => server.once("listening", resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    await new Promise((resolve) => server?.close(resolve));
    await deleteKeys(redis, prefix);
    await redis.quit();
  });

  it("prints the newest --limit actions, newest first, and says how many there are", async () => {
    const out: string[] = [];
    const io: CliIo = { stdout: (t) => out.push(t), stderr: (t) => out.push(t), env: {}, fetch };
    expect(await runAdminCommand("audit", ["--limit", "2", "--url", url, "--token", VIEWER], io)).toBe(0);
    expect(out.join("")).toBe(
      [
        "2026-11-28T01:02:00.000Z  ops-admin (admin)  dead-letters.retry  okta  accepted",
        "2026-11-28T01:01:00.000Z  ops-admin (admin)  resync.trigger  okta  accepted",
        "(the newest 2 of 3)",
        "",
      ].join("\n"),
    );
  });
});
