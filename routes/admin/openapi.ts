import { z } from "zod";
import type { AdminRoute } from "./admin-routes.js";
import { errorSchema } from "./admin-schemas.js";

function jsonSchema(schema: z.ZodType, io: "input" | "output"): Record<string, unknown> {
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: "any" }) as Record<
    string,
    unknown
  >;
  return rest;
}

/** `/sources/:source/users/:id` -> `/sources/{source}/users/{id}` */
function openApiPath(path: string): string {
  return path.replace(/:([A-Za-z]+)/g, "{$1}");
}

/**
 * The OpenAPI 3.1 description of the admin API, generated from the same zod schemas and route
 * table that validate and serve requests (JSON Schema 2020-12 is OpenAPI 3.1's own dialect).
 */
export function buildOpenApi(routes: readonly AdminRoute[], version: string): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  const error = { content: { "application/json": { schema: jsonSchema(errorSchema, "output") } } };
  for (const route of routes) {
    const path = openApiPath(route.path);
    const parameters = [
      ...[...route.path.matchAll(/:([A-Za-z]+)/g)].map((match) => ({
        name: match[1],
        in: "path",
        required: true,
        schema: { type: "string" },
      })),
      ...(route.query
        ? Object.entries((jsonSchema(route.query, "input").properties ?? {}) as Record<string, unknown>).map(
            ([name, schema]) => ({ name, in: "query", required: false, schema }),
          )
        : []),
    ];
    paths[path] ??= {};
    paths[path][route.method] = {
      operationId: route.operationId,
      summary: route.summary,
      "x-required-role": route.role,
      ...(parameters.length > 0 ? { parameters } : {}),
      ...(route.body
        ? {
            requestBody: {
              required: false,
              content: { "application/json": { schema: jsonSchema(route.body, "input") } },
            },
          }
        : {}),
      responses: {
        [String(route.status ?? 200)]: {
          description: "OK",
          ...(route.response
            ? { content: { "application/json": { schema: jsonSchema(route.response, "output") } } }
            : {}),
        },
        "400": { description: "Invalid request", ...error },
        "401": { description: "No valid admin token", ...error },
        "403": { description: "The token's role does not allow this", ...error },
        "404": { description: "Not found", ...error },
        ...(route.method === "post" ? { "409": { description: "Wrong state", ...error } } : {}),
        ...(route.method !== "get"
          ? { "413": { description: "Body larger than server.bodyLimit", ...error } }
          : {}),
        "500": { description: "Internal error (its log line carries the x-request-id)", ...error },
        "503": {
          description: "Redis is unavailable; retry when /readyz answers 200 (Retry-After)",
          ...error,
        },
      },
    };
  }
  return {
    openapi: "3.1.0",
    info: {
      title: "scim-bridge admin API",
      version,
      // OpenAPI describes the operations a path serves, not the answer to one it does not: said here.
      description:
        "A path asked with a method it does not list (an authenticated request) is answered 405, " +
        "its Allow header naming the methods the path serves (HEAD with GET), with the error body " +
        "(#/components/responses/MethodNotAllowed).",
    },
    servers: [{ url: "/admin/v1" }],
    security: [{ bearer: [] }],
    components: {
      securitySchemes: { bearer: { type: "http", scheme: "bearer" } },
      responses: {
        MethodNotAllowed: {
          description: "The path does not serve this method (RFC 9110 §15.5.6)",
          headers: {
            Allow: {
              description: "The methods the path serves, e.g. `GET, HEAD`",
              schema: { type: "string" },
            },
          },
          ...error,
        },
      },
    },
    paths,
  };
}
