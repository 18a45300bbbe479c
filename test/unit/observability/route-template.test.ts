import { describe, expect, it } from "vitest";
import { UNMATCHED_ROUTE, routeTemplate } from "../../../routes/middleware/route-template.js";

describe("routeTemplate", () => {
  it("puts merged mount parameters back as :name", () => {
    expect(
      routeTemplate({
        baseUrl: "/scim/v2/okta",
        route: { path: "/Users/:id" },
        params: { source: "okta", id: "4f1" },
      } as never),
    ).toBe("/scim/v2/:source/Users/:id");
  });

  it("keeps literal mount paths and handles a router's root route", () => {
    expect(routeTemplate({ baseUrl: "/admin/v1", route: { path: "/status" }, params: {} } as never)).toBe(
      "/admin/v1/status",
    );
    expect(
      routeTemplate({ baseUrl: "/hooks/acme", route: { path: "/" }, params: { source: "acme" } } as never),
    ).toBe("/hooks/:source");
    expect(routeTemplate({ baseUrl: "", route: { path: "/healthz" }, params: {} } as never)).toBe("/healthz");
  });

  it("decodes the mount segment before comparing it with a parameter value", () => {
    expect(
      routeTemplate({ baseUrl: "/t/a%20b", route: { path: "/x" }, params: { name: "a b" } } as never),
    ).toBe("/t/:name/x");
  });

  it("labels a request no route matched as unmatched", () => {
    expect(routeTemplate({ baseUrl: "", route: undefined, params: {} } as never)).toBe(UNMATCHED_ROUTE);
  });
});
