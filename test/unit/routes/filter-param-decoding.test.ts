/**
 * decodeFilterParam (routes/scim/list-params.ts): the raw `filter` query parameter decoded with
 * each `+` read by where it stands. Acceptance: test/acceptance/idp-probes-i.test.ts.
 */
import { describe, expect, it } from "vitest";
import type { Request } from "express";
import { decodeFilterParam, listQueryOf, stringLeftOpen } from "../../../routes/scim/list-params.js";

describe("decodeFilterParam", () => {
  it("form-encoded values (PingFederate, Go's url.Values, URLSearchParams): every + is a space", () => {
    expect(decodeFilterParam("userName+eq+%22a%2Bb%40example.com%22")).toBe('userName eq "a+b@example.com"');
    expect(decodeFilterParam("displayName+eq+%22Sales+EMEA%22")).toBe('displayName eq "Sales EMEA"');
    const go = new URLSearchParams({ filter: 'id eq "g1" and members eq "u1"' }).toString().slice(7);
    expect(decodeFilterParam(go)).toBe('id eq "g1" and members eq "u1"');
    // .NET's WebUtility.UrlEncode leaves ! ( ) * as they are; Go's url.QueryEscape and Python's
    // quote_plus leave ~: still form-encoded, every + a space.
    expect(decodeFilterParam("(displayName+eq+%22Sales+(EMEA)%22)")).toBe('(displayName eq "Sales (EMEA)")');
    expect(decodeFilterParam("displayName+eq+%22Rock+%26+Roll!%22")).toBe('displayName eq "Rock & Roll!"');
    expect(decodeFilterParam("userName+eq+%22ann~x+y%22")).toBe('userName eq "ann~x y"');
    expect(decodeFilterParam("displayName+eq+%22O'Brien+Team%22")).toBe(`displayName eq "O'Brien Team"`);
  });

  it("values not form-encoded (a %20, or a raw character a form encoder escapes): a + inside a string is a plus", () => {
    expect(decodeFilterParam("userName%20eq%20%22a+b@example.com%22")).toBe('userName eq "a+b@example.com"');
    // Keycloak keycloak-scim2-storage: `+` between the tokens, the value as it is.
    expect(decodeFilterParam("userName+eq+%22a+b@example.com%22")).toBe('userName eq "a+b@example.com"');
    expect(decodeFilterParam("displayName+eq+%22R+D%20Lab%22")).toBe('displayName eq "R+D Lab"');
    expect(decodeFilterParam('userName+eq+"a+b"')).toBe('userName eq "a+b"');
  });

  it("an escaped quote inside a string does not end it", () => {
    expect(decodeFilterParam("displayName%20eq%20%22say%20%5C%22a+b%5C%22%22+and+title+pr")).toBe(
      'displayName eq "say \\"a+b\\"" and title pr',
    );
  });

  it("decodes UTF-8 percent-escapes; undefined for bad percent-encoding, bytes that are not UTF-8, or raw non-ASCII", () => {
    expect(decodeFilterParam("userName+eq+%22Zo%C3%AB%22")).toBe('userName eq "Zoë"');
    expect(decodeFilterParam("userName+eq+%22a%ZZ%22")).toBeUndefined();
    expect(decodeFilterParam("userName+eq+%22a%2")).toBeUndefined();
    expect(decodeFilterParam("userName+eq+%22Zo%EB%22")).toBeUndefined();
    expect(decodeFilterParam("userName+eq+%22Zoë%22")).toBeUndefined();
  });
});

describe("a filter value with a raw `&` (keycloak-scim2-storage pastes the name in unencoded)", () => {
  /** The request as express hands it over: the query as its parser split it at every `&`. */
  const request = (url: string, query: Record<string, unknown>) =>
    ({ originalUrl: url, query }) as unknown as Request;

  it("stringLeftOpen: an odd number of unescaped quotes", () => {
    expect(stringLeftOpen('displayName eq "R')).toBe(true);
    expect(stringLeftOpen('displayName eq "R&D"')).toBe(false);
    expect(stringLeftOpen('displayName eq "say \\"hi')).toBe(true);
    expect(stringLeftOpen("title pr")).toBe(false);
  });

  it("the parts up to the one that closes the string are the filter's; the others stay parameters", () => {
    const url = "/Groups?filter=displayName+eq+%22R&D%20x=1%22&count=5";
    const query = { filter: 'displayName eq "R', "D x": '1"', count: "5" };
    expect(listQueryOf(request(url, query))).toEqual({ filter: 'displayName eq "R&D x=1"', count: "5" });
  });

  it("a string no part closes, or one closed already, is left as the query parser read it", () => {
    const open = { filter: 'displayName eq "R', D: "" };
    expect(listQueryOf(request("/Groups?filter=displayName%20eq%20%22R&D", open))).toBe(open);
    const closed = { filter: 'displayName eq "R"', count: "1" };
    expect(listQueryOf(request("/Groups?filter=displayName%20eq%20%22R%22&count=1", closed))).toBe(closed);
  });
});
