/**
 * The admin API answers a known path asked with a method it does not serve with 405, an `Allow`
 * header naming the methods it does (RFC 9110 §15.5.6) and a JSON error; its OpenAPI description
 * (/admin/v1/openapi.json) says so, and what it says matches every path's answer.
 */
import express from "express";
import supertest from "supertest";
import { describe, expect, it } from "vitest";
import { createAdminRouter } from "../../../routes/admin/admin-router.js";
import { AdminPrincipals } from "../../../src/admin/admin-principals.js";
import type { AdminService } from "../../../src/admin/admin-service.js";
import type { AuditLog } from "../../../src/admin/audit-log.js";
import { createLogger } from "../../../src/observability/logger.js";

const ADMIN = "admin-405-n-token";

/** The admin router alone: a method it does not serve never reaches the service or the audit log. */
function adminApp() {
  const unused = new Proxy(
    {},
    {
      get: (_target, name) => {
        throw new Error(`not used by a 405: ${String(name)}`);
      },
    },
  );
  const app = express();
  app.use(
    "/admin/v1",
    createAdminRouter({
      service: unused as AdminService,
      audit: unused as AuditLog,
      principals: new AdminPrincipals({ admin: { tokens: [ADMIN] }, sources: {} } as never),
      logger: createLogger("silent"),
    }),
  );
  return supertest(app);
}

type OpenApi = {
  info: { description?: string };
  paths: Record<string, Record<string, unknown>>;
  components: {
    responses?: Record<
      string,
      {
        headers?: Record<string, { schema: { type: string } }>;
        content?: Record<string, { schema: unknown }>;
      }
    >;
  };
};

describe("admin API 405 answers", () => {
  it("are described in the OpenAPI document: a MethodNotAllowed response with Allow and the error body", async () => {
    const http = adminApp();
    const doc = (await http.get("/admin/v1/openapi.json")).body as OpenApi;
    const notAllowed = doc.components.responses?.["MethodNotAllowed"];
    expect(notAllowed).toBeDefined();
    expect(notAllowed?.headers?.["Allow"]?.schema.type).toBe("string");
    const schema = notAllowed?.content?.["application/json"]?.schema as {
      properties: Record<string, unknown>;
    };
    expect(Object.keys(schema.properties)).toEqual(["error"]);
    expect(doc.info.description).toMatch(/405/);
    expect(doc.info.description).toContain("#/components/responses/MethodNotAllowed");
  });

  it("answer every described path asked with a method it does not list, naming the listed ones in Allow", async () => {
    const http = adminApp();
    const doc = (await http.get("/admin/v1/openapi.json")).body as OpenApi;
    const paths = Object.entries(doc.paths);
    expect(paths.length).toBeGreaterThan(5);
    for (const [template, operations] of paths) {
      const path = template.replace(/\{[A-Za-z]+\}/g, "x1");
      const listed = Object.keys(operations).map((m) => m.toUpperCase());
      const allow = [...listed, ...(listed.includes("GET") ? ["HEAD"] : [])];
      const res = await http.put(`/admin/v1${path}`).set("Authorization", `Bearer ${ADMIN}`).send({});
      expect(res.status, template).toBe(405);
      expect((res.headers["allow"] ?? "").split(", ").sort(), template).toEqual(allow.sort());
      expect(res.body.error.code, template).toBe("method_not_allowed");
      expect(typeof res.body.error.message).toBe("string");
    }
  });
});
