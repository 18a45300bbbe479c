import express from "express";
import request from "supertest";
import { describe, expect, it } from "vitest";
import { securityHeaders } from "../../../routes/middleware/security-headers.js";

describe("securityHeaders", () => {
  it("sets the headers a JSON API needs and hides the framework", async () => {
    const app = express();
    app.use(securityHeaders());
    app.get("/x", (_req, res) => {
      res.json({ ok: true });
    });
    const res = await request(app).get("/x").expect(200);
    expect(res.headers["content-security-policy"]).toContain("default-src 'none'");
    expect(res.headers["content-security-policy"]).toContain("frame-ancestors 'none'");
    expect(res.headers["x-content-type-options"]).toBe("nosniff");
    expect(res.headers["strict-transport-security"]).toMatch(/max-age=31536000/);
    expect(res.headers["referrer-policy"]).toBe("no-referrer");
    expect(res.headers["x-frame-options"]).toBe("DENY");
    expect(res.headers["x-powered-by"]).toBeUndefined();
  });
});
