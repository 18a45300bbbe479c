/**
 * Round j: schema URNs that end in a version name a whole extension (RFC 7643 §2.1: an attribute
 * name starts with a letter), and an extension given as null is unassigned (RFC 7643 §2.5), in
 * bodies, PATCH paths and values, projections and filters.
 */
import { describe, expect, it } from "vitest";
import { parseAttrPath } from "../../../src/scim/attribute-schema.js";
import { toCanonicalGroup, toCanonicalUser } from "../../../src/scim/canonical-resource.js";
import { normalizePatchRequest } from "../../../src/scim/dialects.js";
import { parseFilter } from "../../../src/scim/filter-parser.js";
import { matchesFilter } from "../../../src/scim/filter-eval.js";
import { applyGroupPatch, applyUserPatch } from "../../../src/scim/patch.js";
import { projectResource } from "../../../src/scim/projection.js";
import type { JsonObject } from "../../../src/scim/scim-types.js";

const USER = "urn:ietf:params:scim:schemas:core:2.0:User";
const GROUP = "urn:ietf:params:scim:schemas:core:2.0:Group";
const ENT = "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User";
const OKTA_GROUP = "urn:okta:custom:group:1.0";
const ACME = "urn:scim:schemas:extension:acme:1.0";

const patchOps = (Operations: unknown[]) =>
  normalizePatchRequest({ schemas: ["urn:ietf:params:scim:api:messages:2.0:PatchOp"], Operations });

describe("parseAttrPath: a URN whose last segment is a version", () => {
  it.each([
    OKTA_GROUP,
    ACME,
    "urn:example:params:scim:schemas:extension:acme:2.0",
    "URN:OKTA:CUSTOM:GROUP:1.0",
    "urn:acme:hr:3",
    "urn:acme:hr:2.0.1-beta",
  ])("%s names the whole extension", (urn) => {
    expect(parseAttrPath(urn)).toEqual({ urn, attr: "" });
  });

  it("an attribute after it is that extension's attribute", () => {
    expect(parseAttrPath(`${OKTA_GROUP}:description`)).toEqual({ urn: OKTA_GROUP, attr: "description" });
    expect(parseAttrPath(`${ACME}:site.city`)).toEqual({ urn: ACME, attr: "site", sub: "city" });
  });

  it.each([
    ["a known schema's attribute that is no name", `${ENT}:1x`],
    ["the core schema's", `${USER}:2fa`],
    ["the RFC's core namespace without a resource type", "urn:ietf:params:scim:schemas:core:2.0"],
    ["the RFC's message namespace", "urn:ietf:params:scim:api:messages:2.0"],
    ["SCIM 1.1's core schema", "urn:scim:schemas:core:1.0"],
    ["a URN with a space", "urn:acme:hr 1:2.0"],
    ["a URN with a bracket", "urn:acme:hr[1]:2.0"],
    ["an attribute with a version for a sub-attribute", `${ACME}:site.2`],
  ])("%s stays invalid", (_what, text) => {
    expect(parseAttrPath(text)).toBeUndefined();
  });
});

describe("bodies, PATCHes, projections and filters with such an extension", () => {
  it("a POST body keeps it under its URN and lists it in schemas", () => {
    const { resource } = toCanonicalGroup({
      schemas: [GROUP, OKTA_GROUP],
      displayName: "Group 10",
      [OKTA_GROUP]: { description: "All Users West of the Rockies" },
    });
    expect(resource).toEqual({
      schemas: [GROUP, OKTA_GROUP],
      displayName: "Group 10",
      [OKTA_GROUP]: { description: "All Users West of the Rockies" },
    });
  });

  it("a value that is no object is refused, naming the extension", () => {
    expect(() => toCanonicalUser({ userName: "a", [ACME]: "x" })).toThrow(
      `Extension "${ACME}" must be an object`,
    );
  });

  it("PATCH by path, by the whole URN and without path", () => {
    const stored = toCanonicalGroup({ displayName: "G", [OKTA_GROUP]: { description: "one" } }).resource;
    const out = applyGroupPatch(
      stored as JsonObject,
      [],
      patchOps([
        { op: "replace", path: `${OKTA_GROUP}:description`, value: "two" },
        { op: "add", path: OKTA_GROUP, value: { region: "east" } },
        { op: "replace", value: { [OKTA_GROUP]: { owner: "ops" } } },
      ]),
    );
    expect(out.resource[OKTA_GROUP]).toEqual({ description: "two", region: "east", owner: "ops" });
    const removed = applyGroupPatch(
      out.resource as JsonObject,
      [],
      patchOps([{ op: "remove", path: OKTA_GROUP }]),
    );
    expect(removed.resource).not.toHaveProperty(OKTA_GROUP);
    expect(removed.resource.schemas).toEqual([GROUP]);
  });

  it("attributes= and excludedAttributes= name it whole; a filter reads its attributes", () => {
    const user = { schemas: [USER, ACME], id: "u1", userName: "a", [ACME]: { badge: "7" } };
    expect(projectResource(user, { attributes: ACME })).toEqual({
      schemas: [USER, ACME],
      id: "u1",
      [ACME]: { badge: "7" },
    });
    expect(projectResource(user, { excludedAttributes: [ACME] })).toEqual({
      schemas: [USER, ACME],
      id: "u1",
      userName: "a",
    });
    expect(matchesFilter(parseFilter(`${ACME}:badge eq "7"`), user)).toBe(true);
    expect(matchesFilter(parseFilter(`${ACME} pr`), user)).toBe(true);
  });
});

describe("an extension given as null is unassigned (RFC 7643 §2.5)", () => {
  it("a body leaves it out: the known enterprise one, an Entra-style custom one and a versioned one", () => {
    const user = toCanonicalUser({
      schemas: [USER, ENT],
      userName: "a",
      [ENT]: null,
      "urn:ietf:params:scim:schemas:extension:Acme:2.0:User": null,
      [ACME]: null,
      [USER]: null,
    });
    expect(user).toEqual({ schemas: [USER], userName: "a", active: true });
  });

  it("null beside an attribute of the same extension keeps that attribute", () => {
    const user = toCanonicalUser({ userName: "a", [ENT]: null, [`${ENT}:department`]: "Ops" });
    expect(user[ENT]).toEqual({ department: "Ops" });
  });

  it("a PATCH replace or add of the extension with null removes it, by path or without", () => {
    const stored = toCanonicalUser({ userName: "a", [ENT]: { department: "Ops" }, [ACME]: { badge: "7" } });
    const byPath = applyUserPatch(
      stored as JsonObject,
      patchOps([{ op: "replace", path: ENT, value: null }]),
    );
    expect(byPath).not.toHaveProperty(ENT);
    expect(byPath.schemas).toEqual([USER, ACME]);
    const noPath = applyUserPatch(byPath as JsonObject, patchOps([{ op: "add", value: { [ACME]: null } }]));
    expect(noPath).not.toHaveProperty(ACME);
    expect(noPath.schemas).toEqual([USER]);
    // On a user without it, nothing to do.
    const again = applyUserPatch(noPath as JsonObject, patchOps([{ op: "replace", path: ENT, value: null }]));
    expect(again).toEqual(noPath);
  });
});
