import { describe, expect, it } from "vitest";
import { newUserFromTarget, nextUserResource } from "../../../src/hooks/okta-user-change.js";
import { SCHEMA_USER, type ScimUser } from "../../../src/scim/scim-types.js";

const target = { oktaId: "00u1", login: "sam@example.com", displayName: "Sam" };
const user: ScimUser = {
  schemas: [SCHEMA_USER],
  id: "b1",
  userName: "sam@example.com",
  active: true,
  externalId: "00u1",
};

describe("Okta user changes", () => {
  it("creates a user from the target: login -> userName, id -> externalId", () => {
    expect(newUserFromTarget(target, true)).toEqual({
      schemas: [SCHEMA_USER],
      userName: "sam@example.com",
      externalId: "00u1",
      displayName: "Sam",
      active: true,
    });
    expect(newUserFromTarget({ oktaId: "00u1" }, true)).toBeNull();
  });

  it("changes active only when it differs", () => {
    expect(nextUserResource(user, "activate", target)).toBeNull();
    expect(nextUserResource(user, "deactivate", target)).toMatchObject({ active: false });
    expect(nextUserResource(user, "deactivate", target)).not.toHaveProperty("id");
  });

  it("refreshes the profile and keeps another client's externalId", () => {
    const other = { ...user, externalId: "scim-7" };
    expect(nextUserResource(other, "profile", { ...target, login: "sam.r@example.com" })).toMatchObject({
      userName: "sam.r@example.com",
      displayName: "Sam",
      externalId: "scim-7",
    });
    const { externalId: _x, ...noExternal } = user;
    expect(nextUserResource(noExternal as ScimUser, "create", target)).toMatchObject({ externalId: "00u1" });
    expect(nextUserResource({ ...user, displayName: "Sam" }, "profile", target)).toBeNull();
  });
});
