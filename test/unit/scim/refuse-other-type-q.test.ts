/**
 * Reviewed (round q; commit 78643eb): refuseOtherType. A body naming the other type's core schema and not its
 * own is 400 invalidValue; naming both, its own in another case, none, or only an extension is read
 * as the endpoint's type; a stored document rebuilt (PATCH) keeps working.
 */
import { describe, expect, it } from "vitest";
import { BadRequestError } from "../../../src/errors.js";
import { toCanonicalGroup, toCanonicalUser } from "../../../src/scim/canonical-resource.js";
import { applyUserPatch } from "../../../src/scim/patch.js";

const USER = "urn:ietf:params:scim:schemas:core:2.0:User";
const GROUP = "urn:ietf:params:scim:schemas:core:2.0:Group";
const ENT = "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User";

function scimType(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(BadRequestError);
    return (err as BadRequestError).scimType;
  }
  return undefined;
}

describe("review q: refuseOtherType", () => {
  it("refuses a user sent to /Groups and a group sent to /Users", () => {
    expect(scimType(() => toCanonicalGroup({ schemas: [USER], userName: "ada", displayName: "Ada" }))).toBe(
      "invalidValue",
    );
    expect(scimType(() => toCanonicalUser({ schemas: [GROUP], displayName: "x", userName: "x" }))).toBe(
      "invalidValue",
    );
    expect(scimType(() => toCanonicalUser({ schemas: [GROUP.toUpperCase(), ENT], userName: "x" }))).toBe(
      "invalidValue",
    );
  });

  it("reads a body naming both, its own in another case, none, or only an extension as the endpoint's type", () => {
    expect(toCanonicalUser({ schemas: [GROUP, USER], userName: "a" }).userName).toBe("a");
    expect(toCanonicalUser({ schemas: [USER.toLowerCase()], userName: "b" }).userName).toBe("b");
    expect(toCanonicalUser({ userName: "c" }).userName).toBe("c");
    expect(toCanonicalUser({ schemas: [ENT], userName: "d" }).userName).toBe("d");
    expect(toCanonicalUser({ schemas: null, userName: "e" }).userName).toBe("e");
    expect(toCanonicalGroup({ schemas: [USER, GROUP], displayName: "g" }).resource.displayName).toBe("g");
  });

  it("a PATCH (the stored document rebuilt) is not refused, and a PATCH of schemas changes nothing", () => {
    const stored = { schemas: [USER], id: "u1", userName: "ada", active: true };
    const out = applyUserPatch(stored, [{ op: "replace", path: "schemas", value: [GROUP] }]);
    expect(out.schemas).toEqual([USER]);
  });
});
