import { describe, expect, it } from "vitest";
import { parseListParams } from "../../../routes/scim/list-params.js";

const invalid = (detail: string) => ({
  status: 400,
  scimType: "invalidValue",
  message: expect.stringContaining(detail),
});

describe("parseListParams: attributes and excludedAttributes (RFC 7644 §3.4.2.5, §3.9)", () => {
  it("splits, trims and keeps valid names, known or not (unknown ones are ignored later)", () => {
    expect(
      parseListParams({
        attributes:
          " userName , name.givenName,,urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:manager.value",
        excludedAttributes: ["members", "x-custom,$ref"],
      }),
    ).toMatchObject({
      attributes: [
        "userName",
        "name.givenName",
        "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:manager.value",
      ],
      excludedAttributes: ["members", "x-custom", "$ref"],
    });
    expect(parseListParams({ attributes: "", excludedAttributes: " , " })).toMatchObject({
      attributes: undefined,
      excludedAttributes: undefined,
    });
  });

  it.each([
    ["emails["],
    ["name..givenName"],
    ["name.givenName.familyName"],
    ['emails[type eq "work"].value'],
    ["user name"],
    ["9lives"],
    ["urn:"],
  ])("refuses %j with 400 invalidValue naming it", (bad) => {
    expect(() => parseListParams({ attributes: `userName,${bad}` })).toThrow(
      expect.objectContaining(invalid(bad)),
    );
    expect(() => parseListParams({ excludedAttributes: [bad] })).toThrow(
      expect.objectContaining(invalid(bad)),
    );
  });

  it("refuses values that are not strings (a SearchRequest's attributes are strings)", () => {
    for (const value of [5, true, { a: 1 }, ["userName", 3], [null]]) {
      expect(() => parseListParams({ attributes: value })).toThrow(
        expect.objectContaining(invalid("attributes must be a string or a list of strings")),
      );
    }
  });
});
