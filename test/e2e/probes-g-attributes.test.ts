/**
 * Probes-g: typed user attribute values whose definition is changed or missing on the platform
 * while the bridge runs (a platform admin deleting a definition, or replacing it with one of
 * another type: the contract lets no definition change its type, so that is a delete and a
 * create). The bridge caches definitions per process; the judge is the platform's state and the
 * admin API: values of the rule's type land once a definition of that type is there, a clash is a
 * visible dead letter only while it is real.
 *
 * Definitions are deleted and created behind the bridge's back in the emulator's own state.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type TestBridge, USER_SCHEMA, startTestBridge } from "../helpers/bridge-harness.js";
import { waitFor } from "../helpers/redis-test-prefix.js";

const ENT = "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User";

describe("probes-g: attribute definitions changed or missing on the platform mid-run", () => {
  let h: TestBridge;
  beforeAll(async () => {
    h = await startTestBridge("probes-g-attrs", {
      sources: {
        okta: {
          tokens: ["okta-token"],
          attributes: {
            dept: { from: `${ENT}:department`, type: "string" },
            cost: { from: `${ENT}:costCenter`, type: "number" },
          },
        },
      },
    });
  });
  afterAll(async () => {
    await h?.close();
  });

  const defs = () => h.emulator.data.attributes.definitions;
  const defNamed = (name: string) => [...defs().values()].find((d) => d.name === name);
  /** Deletes a definition (and its values) behind the bridge's back. */
  const deleteDef = (name: string) => {
    const def = defNamed(name);
    if (!def) return;
    defs().delete(def.id);
    for (const values of h.emulator.data.attributes.values.values()) values.delete(def.id);
  };
  const attrValue = (userName: string, name: string) => {
    const pid = h.platformUsers().get(userName)?.id as string;
    return h.emulator.data.attributes.valuesOf(pid).find((v) => v.name === name)?.value;
  };
  const entity = async (id: string) =>
    (await h.admin().get(`/sources/okta/users/${id}`)).body as {
      state: string;
      lastError: { code?: string } | null;
    };
  const status = async () => (await h.admin().get("/status")).body as { idle: boolean; deadLetters: number };
  const setDept = (id: string, department: string) =>
    h.scim("okta").patchUser(id, [{ op: "replace", path: `${ENT}:department`, value: department }]);

  /**
   * A definition of the wrong type is a visible clash (right). The platform admin then deletes it
   * and creates it with the rule's type; the identity admin changes the department. Both expect
   * the value on the platform and the dead letter gone: the clash is no longer real, and a stale
   * cache of this process must not keep it one.
   */
  it("a clash fixed on the platform (definition replaced by one of the rule's type): the next change lands", async () => {
    h.emulator.data.attributes.create({ name: "dept", type: "number" });
    const u = await h.scim("okta").createUser("attr.fix@example.com", {
      schemas: [USER_SCHEMA, ENT],
      [ENT]: { department: "Sales" },
    });
    await h.waitForIdle();
    expect(await entity(u.id)).toMatchObject({ state: "dead", lastError: { code: "attribute_type_clash" } });

    deleteDef("dept");
    h.emulator.data.attributes.create({ name: "dept", type: "string" });
    expect((await setDept(u.id, "Marketing")).status).toBe(200);
    await h.waitForIdle();
    expect(attrValue("attr.fix@example.com", "dept")).toBe("Marketing");
    expect(await entity(u.id)).toMatchObject({ state: "synced" });
    expect(await status()).toMatchObject({ idle: true, deadLetters: 0 });
  }, 45_000);

  /**
   * The definition is deleted on the platform after the bridge cached it (values gone with it);
   * then the department changes. The admin expects the definition back with the rule's type and
   * the new value set, no dead letter.
   */
  it("a definition deleted behind the bridge's back after it was cached: created again, the value lands", async () => {
    const u = await h.scim("okta").createUser("attr.gone@example.com", {
      schemas: [USER_SCHEMA, ENT],
      [ENT]: { department: "Ops", costCenter: "12" },
    });
    await h.waitForIdle();
    expect(attrValue("attr.gone@example.com", "cost")).toBe(12);
    deleteDef("cost");
    expect(
      (await h.scim("okta").patchUser(u.id, [{ op: "replace", path: `${ENT}:costCenter`, value: "13" }]))
        .status,
    ).toBe(200);
    await h.waitForIdle();
    expect(defNamed("cost")?.type).toBe("number");
    expect(attrValue("attr.gone@example.com", "cost")).toBe(13);
    expect(await entity(u.id)).toMatchObject({ state: "synced" });
  }, 45_000);

  /**
   * The definition is replaced behind the bridge's back by one of another type (the cache holds
   * the old id and type); then the department changes. The admin expects a visible clash (dead
   * letter `attribute_type_clash`), not a value written into a definition of another type, and
   * the user's other writes still on the platform.
   */
  it("a definition replaced by one of another type after it was cached: a visible clash", async () => {
    const u = await h.scim("okta").createUser("attr.swap@example.com", {
      schemas: [USER_SCHEMA, ENT],
      [ENT]: { department: "Legal" },
      displayName: "Swap 1",
    });
    await h.waitForIdle();
    await waitFor(() => attrValue("attr.swap@example.com", "dept") === "Legal", { what: "the value" });
    deleteDef("dept");
    h.emulator.data.attributes.create({ name: "dept", type: "boolean" });
    expect(
      (
        await h.scim("okta").patchUser(u.id, [
          { op: "replace", path: `${ENT}:department`, value: "Finance" },
          { op: "replace", path: "displayName", value: "Swap 2" },
        ])
      ).status,
    ).toBe(200);
    await h.waitForIdle();
    expect(await entity(u.id)).toMatchObject({ state: "dead", lastError: { code: "attribute_type_clash" } });
    expect(h.platformUsers().get("attr.swap@example.com")?.displayName).toBe("Swap 2");
    expect(attrValue("attr.swap@example.com", "dept")).toBeUndefined();
    expect(h.emulator.violations()).toEqual([]);
  }, 45_000);
});
