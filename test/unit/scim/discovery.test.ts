import { describe, expect, it } from "vitest";
import { resourceTypes, schemas, serviceProviderConfig } from "../../../src/scim/discovery.js";
import type { JsonObject } from "../../../src/scim/scim-types.js";

const BASE = "https://bridge.example.com/scim/v2/okta";
const LIST = "urn:ietf:params:scim:api:messages:2.0:ListResponse";

describe("discovery documents (RFC 7643 §5-7)", () => {
  it("serviceProviderConfig advertises what the bridge supports", () => {
    const spc = serviceProviderConfig(`${BASE}/`);
    expect(spc).toMatchObject({
      schemas: ["urn:ietf:params:scim:schemas:core:2.0:ServiceProviderConfig"],
      patch: { supported: true },
      bulk: { supported: false },
      filter: { supported: true, maxResults: 200 },
      changePassword: { supported: false },
      sort: { supported: false },
      etag: { supported: true },
      meta: { resourceType: "ServiceProviderConfig", location: `${BASE}/ServiceProviderConfig` },
    });
    expect(spc.authenticationSchemes).toEqual([expect.objectContaining({ type: "oauthbearertoken" })]);
  });

  it("resourceTypes is a ListResponse of User (with the enterprise extension) and Group", () => {
    const list = resourceTypes(BASE);
    expect(list).toMatchObject({ schemas: [LIST], totalResults: 2 });
    const [user, group] = list.Resources as JsonObject[];
    expect(user).toMatchObject({
      id: "User",
      endpoint: "/Users",
      schema: "urn:ietf:params:scim:schemas:core:2.0:User",
      schemaExtensions: [
        { schema: "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User", required: false },
      ],
      meta: { resourceType: "ResourceType", location: `${BASE}/ResourceTypes/User` },
    });
    expect(group).toMatchObject({
      id: "Group",
      endpoint: "/Groups",
      meta: { location: `${BASE}/ResourceTypes/Group` },
    });
  });

  it("schemas lists User, EnterpriseUser, Group and the meta schemas with locations", () => {
    const list = schemas(BASE);
    const docs = list.Resources as JsonObject[];
    expect(list).toMatchObject({ schemas: [LIST], totalResults: 6 });
    expect(docs.map((d) => d.id)).toEqual([
      "urn:ietf:params:scim:schemas:core:2.0:User",
      "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User",
      "urn:ietf:params:scim:schemas:core:2.0:Group",
      "urn:ietf:params:scim:schemas:core:2.0:ServiceProviderConfig",
      "urn:ietf:params:scim:schemas:core:2.0:ResourceType",
      "urn:ietf:params:scim:schemas:core:2.0:Schema",
    ]);
    for (const doc of docs) {
      expect(doc.meta).toEqual({ resourceType: "Schema", location: `${BASE}/Schemas/${String(doc.id)}` });
      expect(doc.schemas).toEqual(["urn:ietf:params:scim:schemas:core:2.0:Schema"]);
    }
  });

  it("describes userName as required and not case-exact, password as never returned", () => {
    const user = (schemas().Resources as JsonObject[])[0]!;
    const attrs = user.attributes as JsonObject[];
    expect(attrs.find((a) => a.name === "userName")).toMatchObject({ required: true, caseExact: false });
    expect(attrs.find((a) => a.name === "password")).toMatchObject({
      returned: "never",
      mutability: "writeOnly",
    });
  });

  it("returns fresh documents that callers cannot corrupt", () => {
    const first = schemas(BASE);
    (first.Resources as JsonObject[])[0]!.meta = null;
    expect((schemas(BASE).Resources as JsonObject[])[0]!.meta).not.toBeNull();
  });
});
