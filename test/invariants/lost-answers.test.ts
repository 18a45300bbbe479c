import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type TestBridge, startTestBridge } from "../helpers/bridge-harness.js";

const ENT = "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User";

/**
 * "Lost answers": a create whose answer is lost (attribute definitions, embed groups) is safe to
 * repeat; the bridge finds the object by its unique key and adopts it. And an embed user deleted
 * at the source leaves every group of its tenant that the source owns.
 */
describe("lost answers of attribute definitions and embed groups", () => {
  let h: TestBridge;
  beforeAll(async () => {
    h = await startTestBridge("inv-lost", {
      sources: {
        okta: {
          tokens: ["okta-token"],
          attributes: { department: { from: `${ENT}:department`, type: "string" } },
        },
        portal: { tokens: ["portal-token"], target: { embedTenant: "acme" } },
      },
    });
  });
  afterAll(async () => {
    await h?.close();
  });

  it("an attribute definition whose create answer was lost exists once and the value is set", async () => {
    h.emulator.addFault({ type: "ghost", count: 1, match: { operation: "createUserAttribute" } });
    await h.scim("okta").createUser("dept@example.com", {
      schemas: ["urn:ietf:params:scim:schemas:core:2.0:User", ENT],
      [ENT]: { department: "R&D" },
    });
    await h.waitForIdle();
    expect(
      h.emulator.requests().some((r) => r.fault === "ghost" && r.operation === "createUserAttribute"),
    ).toBe(true);
    const state = h.emulator.state();
    const defs = state.attributes.filter((a) => a.name === "department");
    expect(defs).toHaveLength(1);
    const pid = h.platformUsers().get("dept@example.com")?.id;
    expect(state.attributeValues.filter((v) => v.userId === pid).map((v) => v.value)).toEqual(["R&D"]);
    expect((await h.admin().get("/status")).body.deadLetters).toBe(0);
  });

  it("an embed group whose create answer was lost exists once; a deleted member leaves it", async () => {
    const scim = h.scim("portal");
    const ann = await scim.createUser("ann@acme.example", { externalId: "ext-ann" });
    const ben = await scim.createUser("ben@acme.example", { externalId: "ext-ben" });
    h.emulator.addFault({ type: "ghost", count: 1, match: { operation: "createEmbedGroup" } });
    await scim.createGroup("Viewers", [ann.id, ben.id]);
    await scim.createGroup("Editors", [ben.id]);
    await h.waitForIdle();
    expect(h.emulator.requests().some((r) => r.fault === "ghost" && r.operation === "createEmbedGroup")).toBe(
      true,
    );
    const groups = () => h.emulator.state().embedTenants.find((t) => t.name === "acme")?.groups ?? [];
    expect(groups().filter((g) => g.name === "Viewers")).toHaveLength(1);
    expect(groups().filter((g) => g.name === "Editors")).toHaveLength(1);
    expect(
      groups()
        .find((g) => g.name === "Viewers")
        ?.members.sort(),
    ).toEqual(["ext-ann", "ext-ben"]);

    expect((await scim.deleteUser(ben.id)).status).toBe(204);
    await h.waitForIdle();
    expect(groups().find((g) => g.name === "Viewers")?.members).toEqual(["ext-ann"]);
    expect(groups().find((g) => g.name === "Editors")?.members).toEqual([]);
    expect(h.emulator.state().users).toHaveLength(1); // only okta's workspace user
  });
});
