import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type TestBridge, USER_SCHEMA, startTestBridge } from "../helpers/bridge-harness.js";

const ENT = "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User";

/**
 * "User attribute values", end to end: rules from core, enterprise-extension and value-filter
 * paths, one of each platform type, with coercion (Entra's string booleans and numbers); the
 * missing definitions are created with the rule's type; a change at the source moves the value.
 */
describe("user attribute values reach the platform", () => {
  let h: TestBridge;
  beforeAll(async () => {
    h = await startTestBridge("inv-attrs", {
      sources: {
        entra: {
          tokens: ["entra-token"],
          attributes: {
            department: { from: `${ENT}:department`, type: "string" },
            costCenter: { from: `${ENT}:costCenter`, type: "number" },
            country: { from: 'addresses[type eq "work"].country', type: "string" },
            isManager: { from: "title", type: "boolean" },
            emails: { from: "emails.value", type: "string_array" },
            levels: { from: `${ENT}:division`, type: "number_array" },
          },
        },
      },
    });
  });
  afterAll(async () => {
    await h?.close();
  });

  const valuesOf = (userName: string) => {
    const pid = h.platformUsers().get(userName)?.id;
    const state = h.emulator.state();
    const byId = new Map(state.attributes.map((a) => [a.id, a.name]));
    return Object.fromEntries(
      state.attributeValues
        .filter((v) => v.userId === pid)
        .map((v) => [byId.get(v.attributeId) ?? String(v.attributeId), v.value]),
    );
  };

  it("creates the definitions with their types and sets coerced values", async () => {
    const user = await h.scim("entra").createUser("attrs@example.com", {
      schemas: [USER_SCHEMA, ENT],
      title: "True",
      emails: [
        { value: "attrs@example.com", type: "work", primary: true },
        { value: "a@home.example", type: "home" },
      ],
      addresses: [
        { type: "home", country: "FR" },
        { type: "work", country: "DE" },
      ],
      [ENT]: { department: "R&D", costCenter: "4711", division: "7" },
    });
    await h.waitForIdle();
    const defs = Object.fromEntries(h.emulator.state().attributes.map((a) => [a.name, a.type]));
    expect(defs).toMatchObject({
      department: "string",
      costCenter: "number",
      country: "string",
      isManager: "boolean",
      emails: "string_array",
      levels: "number_array",
    });
    expect(valuesOf("attrs@example.com")).toEqual({
      department: "R&D",
      costCenter: 4711,
      country: "DE",
      isManager: true,
      emails: ["attrs@example.com", "a@home.example"],
      levels: [7],
    });

    const res = await h.scim("entra").patchUser(user.id, [
      { op: "Replace", path: 'addresses[type eq "work"].country', value: "AT" },
      { op: "Replace", path: "title", value: "False" },
    ]);
    expect(res.status).toBe(200);
    await h.waitForIdle();
    expect(valuesOf("attrs@example.com")).toMatchObject({ country: "AT", isManager: false });
    expect((await h.admin().get("/status")).body.deadLetters).toBe(0);
  });
});
