/** routes/scim/scim-routes.ts: the SCIM routing table, decided from method and path alone. */
import { describe, expect, it } from "vitest";
import { matchScimRoute, scimTargetOf, templateOf } from "../../../routes/scim/scim-routes.js";
import { operationOf } from "../../../routes/scim/scim-router.js";
import { scimResourceLabel } from "../../../src/observability/bridge-metrics.js";

describe("scimTargetOf", () => {
  it("splits /scim/v2/<source>/<rest>, the prefix in any case, without the query string", () => {
    expect(scimTargetOf("/scim/v2/okta/Users?filter=x")).toEqual({ source: "okta", rest: "/Users" });
    expect(scimTargetOf("/SCIM/V2/okta/Users/abc")).toEqual({ source: "okta", rest: "/Users/abc" });
    expect(scimTargetOf("/scim/v2/okta")).toEqual({ source: "okta", rest: "/" });
    expect(scimTargetOf("/scim/v2/okta?x=1")).toEqual({ source: "okta", rest: "/" });
    expect(scimTargetOf("/scim/v2/my%20idp/Groups")).toEqual({ source: "my idp", rest: "/Groups" });
  });

  it("makes each run of slashes after the source one slash, not in the query string nor %2F", () => {
    // A base URL ending in "/" (Okta and others): /scim/v2/okta/ + /Users.
    expect(scimTargetOf("/scim/v2/okta//Users?filter=a//b")).toEqual({ source: "okta", rest: "/Users" });
    expect(scimTargetOf("/scim/v2/okta//Groups/abc")).toEqual({ source: "okta", rest: "/Groups/abc" });
    expect(scimTargetOf("/scim/v2/okta///Users//abc//")).toEqual({ source: "okta", rest: "/Users/abc/" });
    expect(scimTargetOf("/scim/v2/okta//")).toEqual({ source: "okta", rest: "/" });
    expect(scimTargetOf("/scim/v2/okta//?x=1")).toEqual({ source: "okta", rest: "/" });
    expect(scimTargetOf("/scim/v2/okta/Users/a%2F%2Fb")).toEqual({ source: "okta", rest: "/Users/a%2F%2Fb" });
    expect(scimTargetOf("/scim/v2/okta/Users?filter=x%20eq%20%22a%2F%2Fb%22")).toEqual({
      source: "okta",
      rest: "/Users",
    });
  });

  it("is undefined for other paths, an empty source, or a source that is not valid percent-encoding", () => {
    expect(scimTargetOf("/scim/v2/")).toBeUndefined();
    // The source is the first segment after /scim/v2/: an empty one is no source, slashes or not.
    expect(scimTargetOf("/scim/v2//Users")).toBeUndefined();
    expect(scimTargetOf("/scim/v2//okta/Users")).toBeUndefined();
    expect(scimTargetOf("/scim/v1/okta/Users")).toBeUndefined();
    expect(scimTargetOf("/hooks/okta")).toBeUndefined();
    expect(scimTargetOf("/scim/v2/%E0%A4%A/Users")).toBeUndefined();
  });
});

describe("matchScimRoute", () => {
  it("routes the resource endpoints by method, names in any case, one trailing slash allowed", () => {
    expect(matchScimRoute("POST", "/Users")).toEqual({
      kind: "resource",
      resource: "Users",
      action: "create",
      body: true,
    });
    expect(matchScimRoute("GET", "/users/")).toMatchObject({
      resource: "Users",
      action: "list",
      body: false,
    });
    expect(matchScimRoute("HEAD", "/Groups")).toMatchObject({ resource: "Groups", action: "list" });
    expect(matchScimRoute("POST", "/Groups/.search")).toMatchObject({ action: "search", body: true });
    expect(matchScimRoute("GET", "/Users/abc")).toMatchObject({ action: "get", id: "abc", body: false });
    expect(matchScimRoute("PUT", "/Users/abc/")).toMatchObject({ action: "replace", id: "abc", body: true });
    expect(matchScimRoute("PATCH", "/GROUPS/abc")).toMatchObject({
      resource: "Groups",
      action: "patch",
      body: true,
    });
    expect(matchScimRoute("DELETE", "/Groups/abc")).toMatchObject({
      action: "remove",
      id: "abc",
      body: false,
    });
  });

  it("percent-decodes ids; an id that is not valid percent-encoding is a bad path", () => {
    expect(matchScimRoute("GET", "/Users/a%2Fb%20c")).toMatchObject({ action: "get", id: "a/b c" });
    expect(matchScimRoute("GET", "/Users/%E0%A4%A")).toEqual({ kind: "badPath" });
  });

  it("takes a run of slashes for one, before and after the resource and the id", () => {
    expect(matchScimRoute("GET", "//Users")).toEqual({
      kind: "resource",
      resource: "Users",
      action: "list",
      body: false,
    });
    expect(matchScimRoute("POST", "//Users")).toMatchObject({ resource: "Users", action: "create" });
    expect(matchScimRoute("PATCH", "//Groups/abc")).toMatchObject({
      resource: "Groups",
      action: "patch",
      id: "abc",
    });
    expect(matchScimRoute("GET", "//Users//abc")).toMatchObject({ action: "get", id: "abc" });
    expect(matchScimRoute("PUT", "/Users/abc//")).toMatchObject({ action: "replace", id: "abc" });
    expect(matchScimRoute("GET", "/Users//")).toMatchObject({ resource: "Users", action: "list" });
    expect(matchScimRoute("POST", "//Users//.search")).toMatchObject({ action: "search" });
    expect(matchScimRoute("GET", "//ServiceProviderConfig")).toEqual({
      kind: "discovery",
      endpoint: "ServiceProviderConfig",
    });
    expect(matchScimRoute("GET", "//")).toEqual({ kind: "root", action: "list", body: false });
    expect(matchScimRoute("POST", "//.search")).toEqual({ kind: "root", action: "search", body: true });
    // Still one segment each: %2F is part of the id, and slashes never make an empty id.
    expect(matchScimRoute("GET", "//Users/a%2F%2Fb")).toMatchObject({ action: "get", id: "a//b" });
    expect(matchScimRoute("GET", "//Users//a//b")).toEqual({ kind: "notFound" });
  });

  it("answers 405 with Allow for a known path and a method it does not serve", () => {
    expect(matchScimRoute("DELETE", "/Users")).toEqual({ kind: "notAllowed", allow: "GET, POST" });
    expect(matchScimRoute("OPTIONS", "/Users/abc")).toEqual({
      kind: "notAllowed",
      allow: "GET, PUT, PATCH, DELETE",
    });
    expect(matchScimRoute("POST", "/Users/abc")).toMatchObject({ kind: "notAllowed" });
    // .search is POST only: it is never a resource id.
    expect(matchScimRoute("GET", "/Users/.search")).toEqual({ kind: "notAllowed", allow: "POST" });
  });

  it("serves discovery to GET only, refusing writes before authentication", () => {
    expect(matchScimRoute("GET", "/ServiceProviderConfig")).toEqual({
      kind: "discovery",
      endpoint: "ServiceProviderConfig",
    });
    expect(matchScimRoute("GET", "/schemas/urn:x")).toEqual({
      kind: "discovery",
      endpoint: "Schemas",
      id: "urn:x",
    });
    expect(matchScimRoute("HEAD", "/ResourceTypes/User")).toMatchObject({ kind: "discovery", id: "User" });
    expect(matchScimRoute("POST", "/Schemas")).toEqual({ kind: "notAllowed", allow: "GET", open: true });
    expect(matchScimRoute("PUT", "/ResourceTypes/User")).toMatchObject({ kind: "notAllowed", open: true });
    expect(matchScimRoute("GET", "/ServiceProviderConfig/x")).toEqual({ kind: "notFound" });
    expect(matchScimRoute("GET", "/Schemas/a/b")).toEqual({ kind: "notFound" });
  });

  it("answers 501 for /Bulk and /Me, 404 for everything else", () => {
    expect(matchScimRoute("POST", "/Bulk")).toEqual({ kind: "notImplemented" });
    expect(matchScimRoute("GET", "/Me")).toEqual({ kind: "notImplemented" });
    expect(matchScimRoute("GET", "/Users/a/b")).toEqual({ kind: "notFound" });
    expect(matchScimRoute("GET", "/Devices")).toEqual({ kind: "notFound" });
    expect(matchScimRoute("GET", "/Me/x")).toEqual({ kind: "notFound" });
  });
});

describe("matchScimRoute at the server root (RFC 7644 §3.4.2.1, §3.4.3)", () => {
  it("GET / is a query of every resource type, POST /.search a search; other methods 405 with Allow", () => {
    expect(matchScimRoute("GET", "/")).toEqual({ kind: "root", action: "list", body: false });
    expect(matchScimRoute("HEAD", "/")).toEqual({ kind: "root", action: "list", body: false });
    expect(matchScimRoute("POST", "/.search")).toEqual({ kind: "root", action: "search", body: true });
    expect(matchScimRoute("POST", "/.SEARCH/")).toEqual({ kind: "root", action: "search", body: true });
    expect(matchScimRoute("POST", "/")).toEqual({ kind: "notAllowed", allow: "GET" });
    expect(matchScimRoute("GET", "/.search")).toEqual({ kind: "notAllowed", allow: "POST" });
    expect(matchScimRoute("POST", "/.search/x")).toEqual({ kind: "notFound" });
  });

  it("labels them, and counts them as the root's list operation", () => {
    const label = (method: string, rest: string) => templateOf(matchScimRoute(method, rest), rest);
    expect(label("GET", "/")).toBe("/scim/v2/:source/");
    expect(label("POST", "/.search")).toBe("/scim/v2/:source/.search");
    expect(label("DELETE", "/")).toBe("/scim/v2/:source/");
    expect(label("GET", "/.search")).toBe("/scim/v2/:source/.search");
    expect(operationOf("POST", "/.search")).toEqual({ resource: "root", operation: "list" });
    expect(operationOf("GET", "/")).toEqual({ resource: "root", operation: "list" });
    expect(operationOf("POST", "/Users/.search")).toEqual({ resource: "Users", operation: "list" });
  });
});

describe("operationOf", () => {
  it("takes the resource from the matched route; a path no route names keeps its segment, bounded when recorded", () => {
    expect(operationOf("GET", "/users/abc")).toEqual({ resource: "Users", operation: "get" });
    expect(operationOf("POST", "/GROUPS/.search")).toEqual({ resource: "Groups", operation: "list" });
    expect(operationOf("GET", "/serviceproviderconfig")).toEqual({
      resource: "ServiceProviderConfig",
      operation: "list",
    });
    expect(operationOf("GET", "/schemas/urn:x")).toEqual({ resource: "Schemas", operation: "get" });
    // 405, 501, 404: the raw segment, which scimResourceLabel bounds (`other` when it is no resource).
    expect(operationOf("DELETE", "/users")).toEqual({ resource: "users", operation: "delete" });
    expect(operationOf("POST", "/bulk")).toEqual({ resource: "bulk", operation: "create" });
    for (const path of ["/ada@example.com", "/Devices/1", "/Users/a/b"]) {
      const op = operationOf("GET", path);
      expect(scimResourceLabel(op.resource)).toBe(path === "/Users/a/b" ? "Users" : "other");
    }
  });
});

describe("templateOf", () => {
  it("labels routes by template, never by id or source, and unknown paths not at all", () => {
    const label = (method: string, rest: string) => templateOf(matchScimRoute(method, rest), rest);
    expect(label("GET", "/Users/abc")).toBe("/scim/v2/:source/Users/:id");
    expect(label("POST", "/users")).toBe("/scim/v2/:source/Users");
    expect(label("POST", "/Groups/.search")).toBe("/scim/v2/:source/Groups/.search");
    expect(label("GET", "/Schemas/urn:x")).toBe("/scim/v2/:source/Schemas/:id");
    expect(label("DELETE", "/Users")).toBe("/scim/v2/:source/Users");
    expect(label("OPTIONS", "/groups/xyz")).toBe("/scim/v2/:source/Groups/:id");
    expect(label("POST", "/Bulk")).toBe("/scim/v2/:source/Bulk");
    expect(label("GET", "/random-scan/abc")).toBeUndefined();
    expect(label("GET", "//Users//abc")).toBe("/scim/v2/:source/Users/:id");
    expect(label("DELETE", "//Users")).toBe("/scim/v2/:source/Users");
    expect(label("DELETE", "//")).toBe("/scim/v2/:source/");
    expect(label("GET", "//Me")).toBe("/scim/v2/:source/Me");
  });
});
