import { describe, expect, it } from "vitest";
import { BadRequestError } from "../../../src/errors.js";
import {
  ASPECT_DEACTIVATED,
  ASPECT_LIFECYCLE,
  ASPECT_PROFILE,
  type HookMarks,
} from "../../../src/hooks/event-ordering.js";
import {
  createsUser,
  mayBeOktaEntity,
  newUserActive,
  newUserFromTarget,
  nextUserResource,
  userAspectValues,
} from "../../../src/hooks/okta-user-change.js";
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

  it("a create stages the user (inactive) on the aspects it is not stale on: lifecycle, profile or both", () => {
    const renamed = { ...target, displayName: "Sam R" };
    expect(nextUserResource(user, "create", renamed)).toMatchObject({ active: false, displayName: "Sam R" });
    // A newer activation holds the lifecycle: only the profile is refreshed.
    expect(nextUserResource(user, "create", renamed, [ASPECT_PROFILE])).toMatchObject({
      active: true,
      displayName: "Sam R",
    });
    // A newer profile change holds the profile: only the lifecycle.
    expect(nextUserResource(user, "create", renamed, [ASPECT_LIFECYCLE])).toEqual({
      schemas: [SCHEMA_USER],
      userName: "sam@example.com",
      externalId: "00u1",
      active: false,
    });
    expect(nextUserResource({ ...user, active: false }, "create", target, [ASPECT_LIFECYCLE])).toBeNull();
  });
});

describe("Okta logins get the userName hygiene of every intake path", () => {
  it("a login with surrounding whitespace becomes the trimmed userName", () => {
    expect(newUserFromTarget({ ...target, login: " sam@example.com " }, true)?.userName).toBe(
      "sam@example.com",
    );
    // The stored user already has that name: nothing changes.
    expect(nextUserResource(user, "profile", { oktaId: "00u1", login: " sam@example.com " })).toBeNull();
    expect(nextUserResource(user, "profile", { ...target, login: " sue@example.com" })).toMatchObject({
      userName: "sue@example.com",
    });
  });

  it("a login with control characters is refused (the event is rejected)", () => {
    expect(() => newUserFromTarget({ ...target, login: "sam\u0000@example.com" }, true)).toThrow(
      BadRequestError,
    );
    expect(() => nextUserResource(user, "profile", { ...target, login: "sam@example.com\n" })).toThrow(
      BadRequestError,
    );
    expect(() => newUserFromTarget({ ...target, oktaId: "00u\u00001" }, true)).toThrow(BadRequestError);
  });
});

describe("Okta events and users the bridge does not hold", () => {
  it("only a create and an activation create a user", () => {
    expect(createsUser("create")).toBe(true);
    expect(createsUser("activate")).toBe(true);
    expect(createsUser("profile")).toBe(false);
    expect(createsUser("deactivate")).toBe(false);
    expect(createsUser("delete")).toBe(false);
  });

  it("a new user is active unless a newer deactivation was received while it was unknown; a create's is staged", () => {
    const none: HookMarks = { aspects: {} };
    // A create says nothing of the status (Okta creates users STAGED): inactive until activated.
    expect(newUserActive("create", 1000, none, null)).toBe(false);
    expect(newUserActive("activate", 1000, none, null)).toBe(true);
    expect(newUserActive("membership", 1000, none, null)).toBe(true);

    const deactivated: HookMarks = { aspects: { [ASPECT_LIFECYCLE]: 2000, [ASPECT_DEACTIVATED]: 2000 } };
    expect(newUserActive("create", 1000, deactivated, null)).toBe(false);
    expect(newUserActive("create", 2000, deactivated, null)).toBe(false);
    expect(newUserActive("activate", 3000, deactivated, null)).toBe(true);
    // A membership add says nothing about the lifecycle: the deactivation stands, whenever it was.
    expect(newUserActive("membership", 1000, deactivated, null)).toBe(false);
    expect(newUserActive("membership", 3000, deactivated, null)).toBe(false);

    // A later lifecycle event superseded it; a deletion since makes it about another user.
    const superseded: HookMarks = { aspects: { [ASPECT_LIFECYCLE]: 2500, [ASPECT_DEACTIVATED]: 2000 } };
    expect(newUserActive("membership", 3000, superseded, null)).toBe(true);
    expect(newUserActive("membership", 3000, deactivated, 2000)).toBe(true);
    expect(newUserActive("create", 1000, deactivated, 1999)).toBe(false);
  });

  it("a stored entity may be the Okta one only when it has no externalId or the same", () => {
    expect(mayBeOktaEntity(undefined, "00u1")).toBe(true);
    expect(mayBeOktaEntity(null, "00u1")).toBe(true);
    expect(mayBeOktaEntity("", "00u1")).toBe(true);
    expect(mayBeOktaEntity("00u1", "00u1")).toBe(true);
    expect(mayBeOktaEntity("00U1", "00u1")).toBe(false);
    expect(mayBeOktaEntity("scim-7", "00u1")).toBe(false);
  });
});

describe("userAspectValues (what a foreign write is compared on)", () => {
  it("changes with active for the lifecycle, with what an Okta profile event sets for the profile", () => {
    const base = userAspectValues(user);
    expect(base[ASPECT_LIFECYCLE]).toBe("true");
    expect(userAspectValues({ ...user, active: false })[ASPECT_LIFECYCLE]).toBe("false");
    // A title (or any attribute an Okta event does not set) changes neither.
    expect(userAspectValues({ ...user, title: "Engineer" } as ScimUser)).toEqual(base);
    expect(userAspectValues({ ...user, displayName: "Sam S" })[ASPECT_PROFILE]).not.toBe(
      base[ASPECT_PROFILE],
    );
    expect(userAspectValues({ ...user, userName: "sam2@example.com" })[ASPECT_PROFILE]).not.toBe(
      base[ASPECT_PROFILE],
    );
    expect(userAspectValues({ ...user, displayName: "Sam S" })[ASPECT_LIFECYCLE]).toBe("true");
  });
});
