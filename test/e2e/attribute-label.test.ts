/**
 * A rule's `displayName` is the label of its platform attribute definition. A definition that
 * already exists with another label (made by hand, or by the bridge before the configuration's
 * label changed) gets the rule's label (PUT /api/v1/user-attributes/{id}) when the bridge writes
 * a value of it: once, however many users' syncs meet it at the same time. A rule without a label
 * leaves the platform's alone.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type TestBridge, startTestBridge } from "../helpers/bridge-harness.js";

const ENT = "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User";
const USER = "urn:ietf:params:scim:schemas:core:2.0:User";

let h: TestBridge;

beforeAll(async () => {
  h = await startTestBridge("attribute-label", {
    start: false,
    sources: {
      hr: {
        tokens: ["hr-token"],
        attributes: {
          dept: { from: `${ENT}:department`, type: "string", displayName: "Department" },
          cost: { from: `${ENT}:costCenter`, type: "string" },
        },
      },
    },
  });
  // Made before the bridge ever ran, under other labels.
  h.emulator.data.attributes.create({ name: "dept", type: "string", displayName: "Dept (old)" });
  h.emulator.data.attributes.create({ name: "cost", type: "string", displayName: "Cost centre" });
  await h.start();
});
afterAll(async () => {
  await h?.close();
});

const definition = (name: string) => h.emulator.data.attributes.list().find((d) => d.name === name);

describe("a rule's displayName", () => {
  it("is written to a definition that has another label, once for twenty users synced at once", async () => {
    await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        h.scim("hr").createUser(`label.${i}@example.com`, {
          schemas: [USER, ENT],
          [ENT]: { department: "Sales", costCenter: "CC-1" },
        }),
      ),
    );
    await h.waitForIdle();
    expect(definition("dept")).toMatchObject({ type: "string", displayName: "Department" });
    // One PUT: the syncs that met the old label at once shared it; the ones after saw the new one.
    expect(h.emulator.count("updateUserAttribute")).toBe(1);
    // A rule without a label leaves the platform's.
    expect(definition("cost")).toMatchObject({ displayName: "Cost centre" });
    expect(h.emulator.violations()).toEqual([]);
  });
});
