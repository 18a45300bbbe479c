/**
 * Review (round o) of operationOf (routes/scim/scim-router.ts): it now takes the resource from the
 * matched route, but still reads the operation from the raw path. A POST the router serves as a
 * search (matchScimRoute: `.search` in any case, one trailing slash allowed) is counted as a
 * `create` in scim_operations_total.
 */
import { describe, expect, it } from "vitest";
import { operationOf } from "../../../routes/scim/scim-router.js";
import { matchScimRoute } from "../../../routes/scim/scim-routes.js";

describe("operationOf (review-o)", () => {
  it("counts a POST the router routes as a search as a list, whatever the case of .search or a trailing slash", () => {
    for (const path of ["/Users/.search/", "/Users/.SEARCH", "/groups/.Search/"]) {
      const route = matchScimRoute("POST", path);
      expect(route).toMatchObject({ kind: "resource", action: "search" });
      expect(operationOf("POST", path, route)).toEqual({
        resource: path.toLowerCase().startsWith("/users") ? "Users" : "Groups",
        operation: "list",
      });
    }
  });
});
