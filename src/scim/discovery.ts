import SCIMMY from "scimmy";
import {
  type JsonObject,
  SCHEMA_ENTERPRISE_USER,
  SCHEMA_GROUP,
  SCHEMA_LIST,
  SCHEMA_USER,
} from "./scim-types.js";

/**
 * Discovery documents (RFC 7644 §4, RFC 7643 §5-7). The schema definitions come from scimmy
 * (computed once at module load); `meta.location` is filled in per base URL.
 */
export const SCHEMA_SERVICE_PROVIDER_CONFIG = "urn:ietf:params:scim:schemas:core:2.0:ServiceProviderConfig";
export const SCHEMA_RESOURCE_TYPE = "urn:ietf:params:scim:schemas:core:2.0:ResourceType";
export const SCHEMA_SCHEMA = "urn:ietf:params:scim:schemas:core:2.0:Schema";
/** RFC 7644 §3.4.2.4 / ServiceProviderConfig `filter.maxResults`. */
export const MAX_RESULTS = 200;

type Describable = { definition: { describe(base?: string): unknown } };

function described(schema: Describable): JsonObject {
  const doc = JSON.parse(JSON.stringify(schema.definition.describe("/Schemas"))) as JsonObject;
  delete doc.meta;
  return doc;
}

const attr = (name: string, type: string, extra: JsonObject = {}): JsonObject => ({
  name,
  type,
  multiValued: false,
  description: extra.description ?? name,
  required: false,
  ...(type === "string" || type === "reference" ? { caseExact: false } : {}),
  mutability: "readOnly",
  returned: "default",
  ...(type === "string" ? { uniqueness: "none" } : {}),
  ...extra,
});

/** RFC 7643 §7: the schema that describes schema resources (scimmy does not ship one). */
const SCHEMA_OF_SCHEMAS: JsonObject = {
  schemas: [SCHEMA_SCHEMA],
  id: SCHEMA_SCHEMA,
  name: "Schema",
  description: "Specifies the schema attribute definitions of a resource (RFC 7643 §7)",
  attributes: [
    attr("id", "reference", { required: true, caseExact: true }),
    attr("name", "string"),
    attr("description", "string"),
    attr("attributes", "complex", {
      multiValued: true,
      required: true,
      subAttributes: [
        attr("name", "string", { required: true, caseExact: true }),
        attr("type", "string", {
          required: true,
          canonicalValues: [
            "string",
            "complex",
            "boolean",
            "decimal",
            "integer",
            "dateTime",
            "reference",
            "binary",
          ],
        }),
        attr("multiValued", "boolean", { required: true }),
        attr("description", "string"),
        attr("required", "boolean"),
        attr("canonicalValues", "string", { multiValued: true, caseExact: true }),
        attr("caseExact", "boolean"),
        attr("mutability", "string", {
          canonicalValues: ["readOnly", "readWrite", "immutable", "writeOnly"],
        }),
        attr("returned", "string", { canonicalValues: ["always", "never", "default", "request"] }),
        attr("uniqueness", "string", { canonicalValues: ["none", "server", "global"] }),
        attr("referenceTypes", "string", { multiValued: true }),
        attr("subAttributes", "complex", { multiValued: true }),
      ],
    }),
  ],
};

const SCHEMA_DOCS: readonly JsonObject[] = Object.freeze([
  described(SCIMMY.Schemas.User),
  described(SCIMMY.Schemas.EnterpriseUser),
  described(SCIMMY.Schemas.Group),
  described(SCIMMY.Schemas.ServiceProviderConfig),
  described(SCIMMY.Schemas.ResourceType),
  SCHEMA_OF_SCHEMAS,
]);

const trim = (baseUrl: string) => baseUrl.replace(/\/+$/, "");

function listResponse(resources: JsonObject[]): JsonObject {
  return {
    schemas: [SCHEMA_LIST],
    totalResults: resources.length,
    itemsPerPage: resources.length,
    startIndex: 1,
    Resources: resources,
  };
}

/** RFC 7643 §5 (not a ListResponse: there is exactly one). */
export function serviceProviderConfig(baseUrl: string): JsonObject {
  return {
    schemas: [SCHEMA_SERVICE_PROVIDER_CONFIG],
    documentationUri: "https://www.rfc-editor.org/rfc/rfc7644",
    patch: { supported: true },
    bulk: { supported: false, maxOperations: 0, maxPayloadSize: 0 },
    filter: { supported: true, maxResults: MAX_RESULTS },
    changePassword: { supported: false },
    sort: { supported: false },
    etag: { supported: true },
    authenticationSchemes: [
      {
        type: "oauthbearertoken",
        name: "OAuth Bearer Token",
        description: "Authentication with the bearer token issued to this source",
        specUri: "https://www.rfc-editor.org/rfc/rfc6750",
        primary: true,
      },
    ],
    meta: { resourceType: "ServiceProviderConfig", location: `${trim(baseUrl)}/ServiceProviderConfig` },
  };
}

/** RFC 7643 §6, answered as a ListResponse (RFC 7644 §4). */
export function resourceTypes(baseUrl: string): JsonObject {
  const base = trim(baseUrl);
  const type = (id: string, endpoint: string, description: string, schema: string, ext: JsonObject[]) => ({
    schemas: [SCHEMA_RESOURCE_TYPE],
    id,
    name: id,
    endpoint,
    description,
    schema,
    schemaExtensions: ext,
    meta: { resourceType: "ResourceType", location: `${base}/ResourceTypes/${id}` },
  });
  return listResponse([
    type("User", "/Users", "User Account", SCHEMA_USER, [
      { schema: SCHEMA_ENTERPRISE_USER, required: false },
    ]),
    type("Group", "/Groups", "Group", SCHEMA_GROUP, []),
  ]);
}

/** RFC 7643 §7: User, EnterpriseUser, Group and the three meta schemas, as a ListResponse. */
export function schemas(baseUrl = ""): JsonObject {
  const base = trim(baseUrl);
  return listResponse(
    SCHEMA_DOCS.map((doc) => ({
      ...doc,
      meta: { resourceType: "Schema", location: `${base}/Schemas/${String(doc.id)}` },
    })),
  );
}
