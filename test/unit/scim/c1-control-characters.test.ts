import { describe, expect, it } from "vitest";
import { BadRequestError } from "../../../src/errors.js";
import { newUserFromTarget, nextUserResource } from "../../../src/hooks/okta-user-change.js";
import {
  checkOpaqueId,
  cleanName,
  toCanonicalGroup,
  toCanonicalUser,
} from "../../../src/scim/canonical-resource.js";
import { applyGroupPatch, applyUserPatch } from "../../../src/scim/patch.js";
import { SCHEMA_USER, type ScimUser } from "../../../src/scim/scim-types.js";

/** C1 controls (U+0080-U+009F), e.g. U+0085 NEXT LINE, which String#trim does not remove. */
const C1 = ["\u0080", "\u0085", "\u008d", "\u009b", "\u009f"].map((c) => ({
  c,
  code: `U+${c.codePointAt(0)?.toString(16).toUpperCase().padStart(4, "0")}`,
}));

function refused(fn: () => unknown, attr: string): void {
  let caught: unknown;
  try {
    fn();
  } catch (err) {
    caught = err;
  }
  expect(caught).toBeInstanceOf(BadRequestError);
  expect((caught as BadRequestError).scimType).toBe("invalidValue");
  expect((caught as BadRequestError).message).toMatch(new RegExp(`"${attr}".*control characters`));
}

describe("C1 control characters are refused like C0 and DEL", () => {
  it.each(C1)("cleanName and checkOpaqueId refuse $code anywhere", ({ c }) => {
    for (const name of [`ada${c}@example.com`, `${c}ada@example.com`, `ada@example.com${c}`, ` ada${c} `]) {
      refused(() => cleanName(name, "userName"), "userName");
      refused(() => checkOpaqueId(name, "externalId"), "externalId");
    }
  });

  it.each(C1)("toCanonicalUser and toCanonicalGroup (POST, PUT) refuse $code", ({ c }) => {
    refused(() => toCanonicalUser({ userName: `ada${c}@example.com` }), "userName");
    refused(() => toCanonicalUser({ userName: "ada@example.com", externalId: `00u${c}1` }), "externalId");
    refused(() => toCanonicalGroup({ displayName: `Ops${c}` }), "displayName");
    refused(() => toCanonicalGroup({ displayName: "Ops", externalId: `g${c}` }), "externalId");
  });

  it("PATCH refuses a new name or externalId with a C1 control, and keeps one already stored", () => {
    const user = { schemas: [SCHEMA_USER], userName: "ada@example.com", active: true };
    refused(
      () => applyUserPatch(user, [{ op: "replace", path: "userName", value: "ada\u0085@example.com" }]),
      "userName",
    );
    refused(() => applyUserPatch(user, [{ op: "add", path: "externalId", value: "e\u009c" }]), "externalId");
    const group = { schemas: ["urn:ietf:params:scim:schemas:core:2.0:Group"], displayName: "Ops" };
    refused(
      () => applyGroupPatch(group, [], [{ op: "replace", path: "displayName", value: "Ops\u0090" }]),
      "displayName",
    );
    // A value the resource already holds is not re-checked (a change to other attributes).
    const legacy = { ...user, userName: "legacy\u0085" };
    expect(applyUserPatch(legacy, [{ op: "replace", path: "active", value: false }])).toMatchObject({
      userName: "legacy\u0085",
      active: false,
    });
  });

  it("the Okta hook's user changes (same name rule) refuse a login or id with a C1 control", () => {
    expect(() => newUserFromTarget({ oktaId: "00u1", login: "sam\u0085@example.com" }, true)).toThrow(
      BadRequestError,
    );
    expect(() => newUserFromTarget({ oktaId: "00u\u00851", login: "sam@example.com" }, true)).toThrow(
      BadRequestError,
    );
    const user: ScimUser = { schemas: [SCHEMA_USER], id: "b1", userName: "sam@example.com", active: true };
    expect(() =>
      nextUserResource(user, "profile", { oktaId: "00u1", login: "sam@example.com\u009f" }),
    ).toThrow(BadRequestError);
  });

  it("the characters either side of the C1 block, and format characters, are accepted", () => {
    // U+007E tilde and U+00A0 (inside a name) are printable; U+00A0 at the edges is trimmed.
    expect(cleanName("a~b", "userName")).toBe("a~b");
    expect(cleanName("a\u00a0b\u00a0", "userName")).toBe("a\u00a0b");
    expect(cleanName("Zoë", "userName")).toBe("Zoë");
    // Format characters (Unicode Cf) are not control characters: accepted as they are, even at
    // the edges (String#trim does not remove U+200B; it does remove U+FEFF).
    for (const c of ["\u200b", "\u200c", "\u200d", "\u2060", "\u202e", "\u00ad"]) {
      expect(cleanName(`ada${c}@example.com`, "userName")).toBe(`ada${c}@example.com`);
      expect(cleanName(`${c}ada`, "userName")).toBe(`${c}ada`);
    }
  });
});
