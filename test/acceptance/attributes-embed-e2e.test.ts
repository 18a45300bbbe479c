/**
 * Acceptance, end to end: typed attribute values as an identity admin maps them (removed values are
 * cleared, Entra's string numbers and booleans coerced) and an embed-tenant source fed by
 * Keycloak-style SCIM (users, then a group with members), checked on the platform emulator.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type TestBridge, USER_SCHEMA, startTestBridge } from "../helpers/bridge-harness.js";

const ENT = "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User";
let h: TestBridge;

beforeAll(async () => {
  h = await startTestBridge("acceptance-attributes", {
    sources: {
      entra: {
        tokens: ["entra-token"],
        attributes: {
          department: { from: `${ENT}:department`, type: "string" },
          costCenter: { from: `${ENT}:costCenter`, type: "number" },
          contractor: { from: "userType", type: "boolean" },
        },
      },
      keycloak: { tokens: ["keycloak-token"], target: { embedTenant: "acme" } },
    },
  });
});
afterAll(async () => {
  await h?.close();
});

type State = {
  users: Array<{ id: string; userName: string }>;
  attributeValues: Array<{ userId: string; name: string; value: unknown }>;
  embedTenants: Array<{
    name: string;
    users: Array<Record<string, unknown>>;
    groups: Array<{ name?: string; displayName?: string; members: string[] } & Record<string, unknown>>;
  }>;
};
const state = () => h.emulator.state() as unknown as State;

function valuesOf(userName: string) {
  const id = h.platformUsers().get(userName)?.id;
  return Object.fromEntries(
    state()
      .attributeValues.filter((v) => v.userId === id)
      .map((v) => [v.name, v.value]),
  );
}

describe("typed attribute values", () => {
  it("coerces Entra's strings, and clears a value the directory no longer has", async () => {
    const entra = h.scim("entra");
    const u = await entra.createUser("attr.user@example.com", {
      schemas: [USER_SCHEMA, ENT],
      userType: "True",
      [ENT]: { department: "Finance", costCenter: "4711" },
    });
    await h.waitForIdle();
    expect(valuesOf("attr.user@example.com")).toEqual({
      department: "Finance",
      costCenter: 4711,
      contractor: true,
    });

    const res = await entra.patchUser(u.id, [
      { op: "Remove", path: `${ENT}:department` },
      { op: "Replace", path: "userType", value: "False" },
    ]);
    expect(res.status).toBe(200);
    await h.waitForIdle();
    const after = valuesOf("attr.user@example.com");
    expect(after.department ?? null).toBeNull();
    expect(after).toMatchObject({ costCenter: 4711, contractor: false });
    expect(h.emulator.violations()).toEqual([]);
  });
});

describe("embed-tenant source", () => {
  it("users and a group pushed over SCIM land in the tenant, members named by the users", async () => {
    const kc = h.scim("keycloak");
    const a = await kc.createUser("kc.a@example.com", { externalId: "kc-a" });
    const b = await kc.createUser("kc.b@example.com", { externalId: "kc-b" });
    const g = await kc.createGroup("kc-analysts", [a.id, b.id]);
    await h.waitForIdle();
    const tenant = state().embedTenants.find((t) => t.name === "acme");
    expect(tenant, JSON.stringify(state().embedTenants)).toBeDefined();
    expect(tenant?.users).toHaveLength(2);
    expect(tenant?.groups).toHaveLength(1);
    expect(tenant?.groups[0]?.members).toHaveLength(2);

    await kc.patchGroup(g.id, [{ op: "remove", path: `members[value eq "${a.id}"]` }]);
    await h.waitForIdle();
    const after = state().embedTenants.find((t) => t.name === "acme");
    expect(after?.groups[0]?.members).toHaveLength(1);
    // The workspace is untouched by an embed-tenant source.
    expect(state().users.filter((u) => u.userName.startsWith("kc."))).toEqual([]);
    expect(h.emulator.violations()).toEqual([]);
  });

  it("a group name longer than the platform's 200 characters is a dead letter naming the limit, never a contract violation", async () => {
    const kc = h.scim("keycloak");
    const u = await kc.createUser("kc.long@example.com", { externalId: "kc-long" });
    // The SCIM intake refuses such a name (test/acceptance/scim-edges.test.ts); a group can still
    // reach the directory by another path (a signed webhook event), so the sync keeps its defence.
    const g = await h.bridge.directory.createGroup(
      "keycloak",
      { schemas: ["urn:ietf:params:scim:schemas:core:2.0:Group"], displayName: "L".repeat(201) },
      [u.id],
    );
    await h.waitForIdle();
    expect(h.emulator.violations()).toEqual([]);
    const letters = await h.admin().get("/dead-letters");
    const letter = (letters.body.items as Array<{ ref: { id: string }; code: string; reason: string }>).find(
      (l) => l.ref.id === g.resource.id,
    );
    expect(letter?.code).toBe("embed_group_name_too_long");
    expect(letter?.reason).toMatch(/200/);
  });
});
