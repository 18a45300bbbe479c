import { describe, expect, it } from "vitest";
import {
  ENTERPRISE_ATTRS,
  GROUP_ATTRS,
  USER_ATTRS,
  formatAttrPath,
  getKey,
  isForeignCoreUrn,
  parseAttrPath,
} from "../../../src/scim/attribute-schema.js";

const ENT = "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User";

describe("attribute schema table (RFC 7643 §2.2, §3.1, §4)", () => {
  it("knows the characteristics the evaluator, validator and projection use", () => {
    expect(USER_ATTRS.get("username")).toMatchObject({ name: "userName", caseExact: false, required: true });
    expect(USER_ATTRS.get("id")).toMatchObject({
      caseExact: true,
      mutability: "readOnly",
      returned: "always",
    });
    expect(USER_ATTRS.get("externalid")).toMatchObject({ caseExact: true });
    expect(USER_ATTRS.get("password")).toMatchObject({ mutability: "writeOnly", returned: "never" });
    expect(USER_ATTRS.get("groups")).toMatchObject({ mutability: "readOnly", multiValued: true });
    expect(USER_ATTRS.get("emails")?.sub?.get("value")).toMatchObject({ caseExact: false, type: "string" });
    expect(USER_ATTRS.get("emails")?.sub?.get("primary")).toMatchObject({ type: "boolean" });
    expect(USER_ATTRS.get("meta")?.sub?.get("lastmodified")).toMatchObject({ type: "dateTime" });
    expect(ENTERPRISE_ATTRS.get("manager")?.sub?.get("value")).toMatchObject({ name: "value" });
    expect(GROUP_ATTRS.get("members")).toMatchObject({ multiValued: true, type: "complex" });
    expect(GROUP_ATTRS.get("displayname")).toMatchObject({ required: true });
  });

  it("parses paths case-insensitively into schema case", () => {
    expect(formatAttrPath(parseAttrPath("NAME.familyname")!)).toBe("name.familyName");
    expect(formatAttrPath(parseAttrPath(`${ENT.toUpperCase()}:MANAGER.VALUE`)!)).toBe(`${ENT}:manager.value`);
    expect(formatAttrPath(parseAttrPath("urn:ietf:params:scim:schemas:core:2.0:User:emails.value")!)).toBe(
      "emails.value",
    );
    expect(parseAttrPath(ENT)).toEqual({ urn: ENT, attr: "" });
  });

  it("reads the enterprise extension's SCIM 1.1 and OneLogin names as RFC 7643 §4.3's", () => {
    for (const alias of [
      "urn:scim:schemas:extension:enterprise:1.0",
      "urn:scim:schemas:extension:enterprise:2.0",
    ]) {
      expect(parseAttrPath(alias)).toEqual({ urn: ENT, attr: "" });
      expect(parseAttrPath(`${alias.toUpperCase()}:Department`)).toMatchObject({
        urn: ENT,
        attr: "department",
      });
      expect(formatAttrPath(parseAttrPath(`${alias}:manager.value`)!)).toBe(`${ENT}:manager.value`);
    }
    // Another schema with a version at the end is still a whole extension of its own.
    expect(parseAttrPath("urn:scim:schemas:extension:acme:2.0")).toEqual({
      urn: "urn:scim:schemas:extension:acme:2.0",
      attr: "",
    });
  });

  it("keeps unknown names and URNs as given", () => {
    expect(parseAttrPath("urn:acme:2.0:User:Badge")).toEqual({ urn: "urn:acme:2.0:User", attr: "Badge" });
    expect(parseAttrPath("Custom.Sub")).toEqual({ attr: "Custom", sub: "Sub" });
  });

  it("rejects what is not a path", () => {
    expect(parseAttrPath("a b")).toBeUndefined();
    expect(parseAttrPath("name.")).toBeUndefined();
    expect(parseAttrPath("1x")).toBeUndefined();
  });

  it("reads a core URN prefix only as the table's own resource type's (a User has no Group attribute)", () => {
    const user = "urn:ietf:params:scim:schemas:core:2.0:User";
    const group = "urn:ietf:params:scim:schemas:core:2.0:Group";
    expect(parseAttrPath(`${user}:displayName`, USER_ATTRS)?.attr).toBe("displayName");
    expect(parseAttrPath(`${group.toUpperCase()}:DISPLAYNAME`, GROUP_ATTRS)?.attr).toBe("displayName");
    expect(parseAttrPath(`${group}:displayName`, USER_ATTRS)).toBeUndefined();
    expect(parseAttrPath(`${group}:members.value`, USER_ATTRS)).toBeUndefined();
    expect(parseAttrPath(`${user}:userName`, GROUP_ATTRS)).toBeUndefined();
    // Filters and projection, which know no one resource type, read either (ANY_CORE_ATTRS).
    expect(parseAttrPath(`${group}:displayName`)?.attr).toBe("displayName");
    expect(isForeignCoreUrn(group, USER_ATTRS)).toBe(true);
    expect(isForeignCoreUrn(user, USER_ATTRS)).toBe(false);
    expect(isForeignCoreUrn(ENT, USER_ATTRS)).toBe(false);
  });

  it("looks keys up case-insensitively", () => {
    expect(getKey({ UserName: 1 }, "userName")).toBe(1);
    expect(getKey({ userName: 2, USERNAME: 3 }, "userName")).toBe(2);
    expect(getKey({}, "x")).toBeUndefined();
  });
});
