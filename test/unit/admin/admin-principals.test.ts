import { describe, expect, it } from "vitest";
import { AdminPrincipals, allows } from "../../../src/admin/admin-principals.js";
import { isIdle } from "../../../src/admin/admin-service.js";
import { hashToken } from "../../../src/config/tokens.js";

describe("AdminPrincipals", () => {
  const principals = new AdminPrincipals({
    admin: {
      tokens: [
        "plain-admin",
        hashToken("hashed-admin"),
        { token: "view", role: "viewer", name: "dash" },
        "shared",
      ],
    },
    sources: { okta: { tokens: ["okta-scim", "shared"] } } as never,
  });

  it("resolves plain and sha256 admin tokens, and named viewers", () => {
    expect(principals.resolve("plain-admin")).toEqual({
      kind: "admin",
      name: "admin-token-1",
      role: "admin",
    });
    expect(principals.resolve("hashed-admin")?.role).toBe("admin");
    expect(principals.resolve("view")).toEqual({ kind: "admin", name: "dash", role: "viewer" });
  });

  it("never accepts a source's token, even one also listed as an admin token", () => {
    expect(principals.resolve("okta-scim")).toBeUndefined();
    expect(principals.resolve("shared")).toBeUndefined();
    expect(principals.resolve("")).toBeUndefined();
  });

  it("lets viewers read and only admins act", () => {
    expect(allows("viewer", "viewer")).toBe(true);
    expect(allows("viewer", "admin")).toBe(false);
    expect(allows("admin", "admin")).toBe(true);
  });
});

describe("isIdle", () => {
  const ops = ["reconcile", "resync"];
  it("is idle with nothing pending and no busy job", () => {
    expect(isIdle(0, { sync: { waiting: 0, failed: 4 }, reconcile: { delayed: 1 } }, ops)).toBe(true);
  });
  it("is not idle with pending entities, a delayed sync, or a running reconciliation", () => {
    expect(isIdle(1, {}, ops)).toBe(false);
    expect(isIdle(0, { sync: { delayed: 1 } }, ops)).toBe(false);
    expect(isIdle(0, { reconcile: { active: 1 } }, ops)).toBe(false);
    expect(isIdle(0, { resync: { waiting: 1 } }, ops)).toBe(false);
  });
});
