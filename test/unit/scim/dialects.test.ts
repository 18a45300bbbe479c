import { describe, expect, it } from "vitest";
import { BadRequestError } from "../../../src/errors.js";
import {
  coerceBoolean,
  expandNoPathValue,
  listInList,
  normalizeManager,
  normalizePatchRequest,
  userFilterPath,
} from "../../../src/scim/dialects.js";
import { parseFilter } from "../../../src/scim/filter-parser.js";
import { loadFixture } from "./load-fixture.js";

const PATCH = "urn:ietf:params:scim:api:messages:2.0:PatchOp";
const ENT = "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User";

function syntaxError(body: unknown): BadRequestError {
  try {
    normalizePatchRequest(body);
  } catch (err) {
    expect(err).toBeInstanceOf(BadRequestError);
    expect((err as BadRequestError).scimType).toBe("invalidSyntax");
    return err as BadRequestError;
  }
  throw new Error("expected invalidSyntax");
}

describe("normalizePatchRequest (RFC 7644 §3.5.2)", () => {
  it("returns the operations of a canonical request", () => {
    expect(normalizePatchRequest(loadFixture("okta/group-remove-and-add").body)).toEqual([
      { op: "remove", path: 'members[value eq "89bb1940-b905-4575-9e7f-6f887cfb368e"]' },
      {
        op: "add",
        path: "members",
        value: [{ value: "23a35c27-23d3-4c03-b4c5-6443c09e7173", display: "test.user@okta.local" }],
      },
    ]);
  });

  it("quirk: op names in any case (Entra sends Replace/Add/Remove)", () => {
    const ops = normalizePatchRequest({
      schemas: [PATCH],
      Operations: [
        { op: "Replace", path: "title", value: "x" },
        { op: "Add", path: "nickName", value: "y" },
        { op: "REMOVE", path: "locale" },
      ],
    });
    expect(ops.map((o) => o.op)).toEqual(["replace", "add", "remove"]);
    expect(normalizePatchRequest(loadFixture("entra/disable-user-string-boolean").body)).toEqual([
      { op: "replace", path: "active", value: "False" },
    ]);
  });

  it("leniency: accepts a request without schemas (documented choice)", () => {
    expect(normalizePatchRequest({ Operations: [{ op: "add", path: "title", value: "x" }] })).toHaveLength(1);
    expect(normalizePatchRequest({ schemas: [], Operations: [] })).toEqual([]);
  });

  it("leniency: matches the Operations key case-insensitively", () => {
    expect(
      normalizePatchRequest({ schemas: [PATCH], operations: [{ op: "add", path: "a", value: 1 }] }),
    ).toHaveLength(1);
  });

  it("quirk: value given as a JSON string holding an object", () => {
    const ops = normalizePatchRequest({
      schemas: [PATCH],
      Operations: [
        { op: "replace", value: '{"active": false}' },
        { op: "add", path: "members", value: '[{"value": "u1"}]' },
        { op: "replace", path: "displayName", value: "[not json]" },
        { op: "replace", path: "title", value: '{"kept": "as a string"}' },
      ],
    });
    expect(ops[0]!.value).toEqual({ active: false });
    expect(ops[1]!.value).toEqual([{ value: "u1" }]);
    expect(ops[2]!.value).toBe("[not json]");
    expect(ops[3]!.value).toBe('{"kept": "as a string"}');
  });

  it("treats an empty path as no path", () => {
    expect(
      normalizePatchRequest({ Operations: [{ op: "replace", path: "", value: { active: false } }] }),
    ).toEqual([{ op: "replace", value: { active: false } }]);
  });

  it("rejects a body that is not a PatchOp with invalidSyntax", () => {
    syntaxError(null);
    syntaxError([]);
    syntaxError({ schemas: [PATCH] });
    syntaxError({ schemas: [PATCH], Operations: {} });
    expect(
      syntaxError({ schemas: ["urn:ietf:params:scim:schemas:core:2.0:User"], Operations: [] }).message,
    ).toMatch(/PatchOp/);
    syntaxError({ schemas: "x", Operations: [] });
  });

  it("rejects a bad op with invalidSyntax naming the operation", () => {
    expect(syntaxError({ Operations: [{ op: "move", path: "a" }] }).message).toMatch(/Operations\[0\]\.op/);
    expect(syntaxError({ Operations: [{ op: "add", path: "a", value: 1 }, "x"] }).message).toMatch(
      /Operations\[1\]/,
    );
    syntaxError({ Operations: [{ path: "a" }] });
  });

  it("rejects a path that is not a string with invalidPath", () => {
    expect(() => normalizePatchRequest({ Operations: [{ op: "add", path: 5, value: 1 }] })).toThrow(
      expect.objectContaining({ scimType: "invalidPath" }),
    );
  });
});

describe("a list inside a one-element list (SCIM-SDK's setValueNode: keycloak-scim)", () => {
  it("quirk: [[a, b]] with a path is the list [a, b]; [value] and other lists are left as they are", () => {
    expect(
      normalizePatchRequest(loadFixture("keycloak/update-user-extension-list").body).map((o) => o.value),
    ).toEqual(["true", "kay@keycloak.example", "Kay Cloak", ["Platform"], ["gold", "silver"]]);
    expect(listInList([[{ value: "u1" }, { value: "u2" }]])).toEqual([{ value: "u1" }, { value: "u2" }]);
    expect(listInList([["a"], ["b"]])).toEqual([["a"], ["b"]]);
    expect(listInList(["a"])).toEqual(["a"]);
    expect(listInList([])).toEqual([]);
    expect(listInList("a")).toBe("a");
  });
});

describe("dialect helpers", () => {
  it('quirk: booleans as strings "True"/"False"/"true"', () => {
    expect(coerceBoolean("True")).toBe(true);
    expect(coerceBoolean("False")).toBe(false);
    expect(coerceBoolean("true")).toBe(true);
    expect(coerceBoolean(" FALSE ")).toBe(false);
    expect(coerceBoolean(true)).toBe(true);
    expect(coerceBoolean("yes")).toBeUndefined();
    expect(coerceBoolean(1)).toBeUndefined();
  });

  it("quirk: manager as a bare id, an object or an array", () => {
    expect(normalizeManager("m1")).toEqual({ value: "m1" });
    expect(normalizeManager({ value: "m1", displayName: "Boss" })).toEqual({
      value: "m1",
      displayName: "Boss",
    });
    expect(normalizeManager({ VALUE: "m1" })).toEqual({ value: "m1" });
    expect(normalizeManager([{ $ref: null, value: "m1" }])).toEqual({ value: "m1" });
    expect(normalizeManager("")).toBeNull();
    expect(normalizeManager([])).toBeNull();
    expect(normalizeManager({ value: "" })).toBeNull();
    expect(() => normalizeManager(5)).toThrow(BadRequestError);
  });

  it("quirk: no-path value with dotted and URN-prefixed keys (Entra)", () => {
    const op = loadFixture("entra/no-path-dotted-keys").body.Operations[0];
    expect(expandNoPathValue(op.value)).toEqual([
      { path: "active", value: false },
      { path: "name.givenName", value: "Barbara" },
      { path: "name.familyName", value: "Jensen" },
      { path: `${ENT}:department`, value: "Tech Infrastructure" },
      { path: `${ENT}:manager`, value: "2819c223-7f76-453a-919d-ad10a6e7a" },
    ]);
  });

  it("expands an extension object and drops schemas/id/meta in a no-path value", () => {
    expect(
      expandNoPathValue({
        schemas: ["x"],
        id: "1",
        meta: {},
        [ENT]: { department: "Ops" },
        displayName: "D",
      }),
    ).toEqual([
      { path: `${ENT}:department`, value: "Ops" },
      { path: "displayName", value: "D" },
    ]);
  });

  it("expands an object under an unknown extension URN as that whole extension", () => {
    const custom = "urn:okta:acme:1.0:profile:user";
    expect(expandNoPathValue({ [custom]: { badge: "7" } })).toEqual([
      { path: `${custom}:badge`, value: "7" },
    ]);
  });

  it("keeps a URN-prefixed complex enterprise attribute as one path", () => {
    expect(expandNoPathValue({ [`${ENT}:manager`]: { value: "m1" } })).toEqual([
      { path: `${ENT}:manager`, value: { value: "m1" } },
    ]);
  });

  it('quirk: PingOne\'s `email` in a filter on Users is `emails` (`email Co "%s"`)', () => {
    expect(userFilterPath("email")).toBe("emails");
    expect(userFilterPath("EMAIL")).toBe("emails");
    expect(userFilterPath("Email.Value")).toBe("emails.Value");
    for (const other of ["emails", "emailAddress", "workEmail", "name.email", `${ENT}:email`, "email.a.b"]) {
      expect(userFilterPath(other)).toBe(other);
    }
    const filter = loadFixture("pingone/filter-email-co").body.filter;
    // Read as `emails`, and as the user's own `email` where it has one (pingone-email-own-attr-n2r).
    expect(parseFilter(filter, "User")).toEqual({
      type: "or",
      left: { type: "compare", path: "email", op: "co", value: "ann.lee@example.com" },
      right: { type: "compare", path: "emails", op: "co", value: "ann.lee@example.com" },
    });
    // Only on Users, and not inside a value filter (its names are sub-attributes).
    expect(parseFilter(filter, "Group")).toMatchObject({ path: "email" });
    expect(parseFilter('emails[email eq "x"]', "User")).toMatchObject({ filter: { path: "email" } });
  });

  it("rejects a no-path operation whose value is not an object", () => {
    expect(() => expandNoPathValue("x")).toThrow(expect.objectContaining({ scimType: "invalidSyntax" }));
  });
});
