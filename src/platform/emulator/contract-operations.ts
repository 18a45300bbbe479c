/**
 * The contract (src/platform/contract/platform-api.yaml) turned into a routing table: one entry
 * per path and method, named after the PlatformClient method that calls it, with compiled ajv
 * (JSON Schema 2020-12) validators for the request body and every path/query parameter.
 */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";
import addFormatsModule from "ajv-formats";
import { parse } from "yaml";
import { violation } from "./emulator-error.js";

const CONTRACT_URL = new URL("../contract/platform-api.yaml", import.meta.url);
const CONTRACT_ID = "urn:scim-bridge:platform-contract";

/** `METHOD path` -> the PlatformClient method name used in logs and counters. */
export const OPERATION_NAMES: Readonly<Record<string, string>> = {
  "GET /api/scim/v2/Users": "listUsers",
  "POST /api/scim/v2/Users": "createUser",
  "GET /api/scim/v2/Users/{id}": "getUser",
  "PUT /api/scim/v2/Users/{id}": "replaceUser",
  "PATCH /api/scim/v2/Users/{id}": "patchUser",
  "DELETE /api/scim/v2/Users/{id}": "deleteUser",
  "GET /api/scim/v2/Groups": "listGroups",
  "POST /api/scim/v2/Groups": "createGroup",
  "GET /api/scim/v2/Groups/{id}": "getGroup",
  "PUT /api/scim/v2/Groups/{id}": "replaceGroup",
  "PATCH /api/scim/v2/Groups/{id}": "patchGroup",
  "DELETE /api/scim/v2/Groups/{id}": "deleteGroup",
  "POST /api/v1/users/bulk": "bulkUsers",
  "GET /api/v1/user-attributes/": "listUserAttributes",
  "POST /api/v1/user-attributes/": "createUserAttribute",
  "PUT /api/v1/user-attributes/{id}": "updateUserAttribute",
  "GET /api/v1/user-attribute-values/{userId}": "getUserAttributeValues",
  "POST /api/v1/user-attribute-values/": "upsertUserAttributeValue",
  "GET /api/v1/embed-tenants/": "listEmbedTenants",
  "DELETE /api/v1/embed-tenants/{embedTenantName}": "deleteEmbedTenant",
  "GET /api/v1/embed-tenants/{embedTenantName}/users": "listEmbedUsers",
  "GET /api/v1/embed-tenants/{embedTenantName}/groups": "listEmbedGroups",
  "POST /api/v1/embed-tenants/{embedTenantName}/groups": "createEmbedGroup",
  "GET /api/v1/embed-tenants/{embedTenantName}/groups/{id}": "getEmbedGroup",
  "PATCH /api/v1/embed-tenants/{embedTenantName}/groups/{id}": "updateEmbedGroup",
  "DELETE /api/v1/embed-tenants/{embedTenantName}/groups/{id}": "deleteEmbedGroup",
  "GET /api/v1/embed-tenants/{embedTenantName}/groups/{id}/users": "listEmbedGroupMembers",
  "POST /api/v1/embed-tenants/{embedTenantName}/groups/{id}/users": "addEmbedGroupMembers",
  "DELETE /api/v1/embed-tenants/{embedTenantName}/groups/{id}/users": "removeEmbedGroupMembers",
};

type Schema = Record<string, unknown>;

interface ParameterSpec {
  name: string;
  in: "path" | "query";
  type: string | undefined;
  validate: ValidateFunction;
}

export interface ContractOperation {
  name: string;
  method: string;
  path: string;
  scim: boolean;
  write: boolean;
  pattern: RegExp;
  pathParams: string[];
  params: ParameterSpec[];
  bodyRequired: boolean;
  validateBody?: ValidateFunction;
  /** Response schemas by status code (only statuses whose response declares a body schema). */
  responses: Record<string, ValidateFunction>;
}

export interface ParsedRequest {
  params: Record<string, string>;
  query: Record<string, string | number | boolean>;
}

const METHODS = ["get", "post", "put", "patch", "delete"] as const;

/** Rewrites `#/components/...` references so they resolve inside the registered contract schema. */
function rebase(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(rebase);
  if (value && typeof value === "object") {
    const out: Schema = {};
    for (const [key, inner] of Object.entries(value)) {
      out[key] =
        key === "$ref" && typeof inner === "string" && inner.startsWith("#/")
          ? CONTRACT_ID + inner
          : rebase(inner);
    }
    return out;
  }
  return value;
}

function resolveParameter(doc: Schema, param: Schema): Schema {
  const ref = param.$ref;
  if (typeof ref !== "string") return param;
  const name = ref.replace("#/components/parameters/", "");
  const components = doc.components as { parameters: Record<string, Schema> };
  const resolved = components.parameters[name];
  if (!resolved) throw new Error(`contract: unresolved parameter ${ref}`);
  return resolved;
}

function compileResponses(
  responses: Record<string, Schema> | undefined,
  compile: (schema: unknown) => ValidateFunction,
): Record<string, ValidateFunction> {
  const out: Record<string, ValidateFunction> = {};
  for (const [status, response] of Object.entries(responses ?? {})) {
    const content = response.content as Record<string, { schema?: Schema }> | undefined;
    const schema = content ? Object.values(content)[0]?.schema : undefined;
    if (schema) out[status] = compile(schema);
  }
  return out;
}

function loadContract(): ContractOperation[] {
  const doc = parse(readFileSync(fileURLToPath(CONTRACT_URL), "utf8")) as Schema;
  const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  const components = doc.components as { schemas: Schema };
  ajv.addSchema(rebase({ $id: CONTRACT_ID, components: { schemas: components.schemas } }) as Schema);
  const compile = (schema: unknown) => ajv.compile(rebase(schema) as Schema);

  const operations: ContractOperation[] = [];
  for (const [path, item] of Object.entries(doc.paths as Record<string, Schema>)) {
    const shared = ((item.parameters as Schema[] | undefined) ?? []).map((p) => resolveParameter(doc, p));
    for (const method of METHODS) {
      const op = item[method] as Schema | undefined;
      if (!op) continue;
      const key = `${method.toUpperCase()} ${path}`;
      const name = OPERATION_NAMES[key];
      if (!name) throw new Error(`contract: no operation name for ${key}`);
      const own = ((op.parameters as Schema[] | undefined) ?? []).map((p) => resolveParameter(doc, p));
      const params: ParameterSpec[] = [...shared, ...own].map((p) => {
        const schema = (p.schema ?? {}) as Schema;
        return {
          name: String(p.name),
          in: p.in as "path" | "query",
          type: typeof schema.type === "string" ? schema.type : undefined,
          validate: compile(schema),
        };
      });
      const pathParams: string[] = [];
      const source = path
        .replace(/[.*+?^$()|[\]\\]/g, "\\$&")
        .replace(/\{([^}]+)\}/g, (_m, param: string) => {
          pathParams.push(param);
          return "([^/]+)";
        });
      const body = op.requestBody as Schema | undefined;
      const content = body?.content as Record<string, { schema: Schema }> | undefined;
      const bodySchema = content ? Object.values(content)[0]?.schema : undefined;
      operations.push({
        name,
        method: method.toUpperCase(),
        path,
        scim: path.startsWith("/api/scim/v2/"),
        write: method !== "get",
        pattern: new RegExp(`^${source}$`),
        pathParams,
        params,
        bodyRequired: body?.required === true,
        validateBody: bodySchema ? compile(bodySchema) : undefined,
        responses: compileResponses(op.responses as Record<string, Schema> | undefined, compile),
      });
    }
  }
  return operations;
}

let cached: ContractOperation[] | undefined;

/** Every operation of the contract (loaded and compiled once per process). */
export function contractOperations(): ContractOperation[] {
  cached ??= loadContract();
  return cached;
}

export type RouteMatch =
  | { kind: "operation"; operation: ContractOperation; params: Record<string, string> }
  | { kind: "method-not-allowed"; path: string }
  | { kind: "unknown" };

/** Exact match of method and path against the contract: no trailing-slash leniency. */
export function matchRoute(method: string, pathname: string): RouteMatch {
  let pathKnown: string | undefined;
  for (const operation of contractOperations()) {
    const match = operation.pattern.exec(pathname);
    if (!match) continue;
    pathKnown = operation.path;
    if (operation.method !== method) continue;
    const params: Record<string, string> = {};
    operation.pathParams.forEach((name, i) => {
      params[name] = decodeURIComponent(match[i + 1] ?? "");
    });
    return { kind: "operation", operation, params };
  }
  return pathKnown ? { kind: "method-not-allowed", path: pathKnown } : { kind: "unknown" };
}

function formatErrors(validate: ValidateFunction): string {
  return (validate.errors ?? [])
    .slice(0, 5)
    .map((e) => `${e.instancePath || "(root)"} ${e.message ?? "is invalid"}`)
    .join("; ");
}

function coerce(spec: ParameterSpec, raw: string): string | number | boolean {
  if (spec.type === "integer" || spec.type === "number") {
    // An integer is digits only: "100.0" is a number, not an integer (a strict platform refuses it).
    const form = spec.type === "integer" ? /^-?\d+$/ : /^-?\d+(\.\d+)?$/;
    if (!form.test(raw))
      throw violation(
        `${spec.in} parameter ${spec.name} must be ${spec.type === "integer" ? "an" : "a"} ${spec.type}`,
      );
    return Number(raw);
  }
  if (spec.type === "boolean") {
    if (raw !== "true" && raw !== "false")
      throw violation(`${spec.in} parameter ${spec.name} must be a boolean`);
    return raw === "true";
  }
  return raw;
}

/** Validates path and query parameters against the contract; unknown query parameters are violations. */
export function parseParameters(
  operation: ContractOperation,
  params: Record<string, string>,
  search: URLSearchParams,
): ParsedRequest {
  const query: Record<string, string | number | boolean> = {};
  for (const key of new Set(search.keys())) {
    const spec = operation.params.find((p) => p.in === "query" && p.name === key);
    if (!spec) throw violation(`query parameter ${key} is not in the contract for ${operation.name}`);
    const values = search.getAll(key);
    if (values.length > 1) throw violation(`query parameter ${key} given more than once`);
    const value = coerce(spec, values[0] ?? "");
    if (!spec.validate(value)) throw violation(`query parameter ${key} ${formatErrors(spec.validate)}`);
    query[key] = value;
  }
  for (const spec of operation.params) {
    if (spec.in !== "path") continue;
    const value = coerce(spec, params[spec.name] ?? "");
    if (!spec.validate(value)) throw violation(`path parameter ${spec.name} ${formatErrors(spec.validate)}`);
  }
  return { params, query };
}

/** Validates a parsed JSON body against the operation's request schema. */
export function validateBody(operation: ContractOperation, body: unknown): void {
  if (!operation.validateBody) {
    // The contract gives this operation no request body (a GET, most DELETEs): sending one is a
    // client bug a strict platform (or a proxy in front of it) may refuse.
    if (body !== undefined) throw violation(`${operation.name} takes no request body`);
    return;
  }
  if (body === undefined) {
    if (operation.bodyRequired) throw violation(`${operation.name} needs a request body`);
    return;
  }
  if (!operation.validateBody(body)) {
    throw violation(`request body: ${formatErrors(operation.validateBody)}`, "invalidSyntax");
  }
}

/** Why an answer body breaks the contract's response schema for its status, if it does. */
export function responseProblem(
  operation: ContractOperation,
  status: number,
  body: unknown,
): string | undefined {
  const validate = operation.responses[String(status)];
  if (!validate || validate(body)) return undefined;
  return `${operation.name} ${status} answer: ${formatErrors(validate)}`;
}
