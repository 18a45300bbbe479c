import type { Request, Response } from "express";
import type { UserRecord } from "../../src/directory/directory-types.js";
import { checkIfMatch } from "../../src/directory/if-match.js";
import { NotFoundError } from "../../src/errors.js";
import { normalizePatchRequest } from "../../src/scim/dialects.js";
import { statesAttribute, toCanonicalUser } from "../../src/scim/canonical-resource.js";
import { applyUserPatch } from "../../src/scim/patch.js";
import { projectResource } from "../../src/scim/projection.js";
import { SCHEMA_LIST, type JsonObject } from "../../src/scim/scim-types.js";
import {
  type ListParams,
  type Projection,
  listQueryOf,
  parseListParams,
  projectionOf,
  searchRequest,
} from "./list-params.js";
import { ifMatchOf, preconditionsOf, resourceHeaders } from "./preconditions.js";
import { renderUser, scimBaseUrl } from "./scim-render.js";
import { type ResourceHandlers, type ScimRouterDeps, requireObjectBody, sendScim } from "./scim-http.js";

/** /Users (RFC 7644 §3.3 create, §3.4 query, §3.5 replace/patch, §3.6 delete). */
export function createUserHandlers({ directory }: ScimRouterDeps): ResourceHandlers {
  const source = (req: Request) => String(req.params.source);
  const id = (req: Request) => String(req.params.id);
  /** An answer that carries one user: its body (projected as asked), ETag and Location. */
  const sendUser = (req: Request, res: Response, status: number, record: UserRecord, wanted: Projection) => {
    const base = scimBaseUrl(req, source(req));
    sendScim(
      res,
      status,
      projectResource(renderUser(record, base), wanted),
      resourceHeaders(base, "Users", record),
    );
  };

  const listWith = async (req: Request, params: ListParams): Promise<JsonObject> => {
    const base = scimBaseUrl(req, source(req));
    const page = await directory.listUsers(source(req), params);
    return {
      schemas: [SCHEMA_LIST],
      totalResults: page.totalResults,
      startIndex: params.startIndex,
      itemsPerPage: page.items.length,
      Resources: page.items.map((u) => projectResource(renderUser(u, base), params)),
    };
  };

  return {
    list: async (req, res) => {
      sendScim(res, 200, await listWith(req, parseListParams(listQueryOf(req), "User")));
    },
    search: async (req, res) => {
      sendScim(res, 200, await listWith(req, parseListParams(searchRequest(requireObjectBody(req)), "User")));
    },
    create: async (req, res) => {
      const resource = toCanonicalUser(requireObjectBody(req));
      const wanted = projectionOf(req);
      sendUser(req, res, 201, await directory.createUser(source(req), resource), wanted);
    },
    get: async (req, res) => {
      const wanted = projectionOf(req);
      const record = await directory.getUser(source(req), id(req));
      if (!record) throw new NotFoundError(`User ${id(req)} not found`);
      checkIfMatch(record.generation, ifMatchOf(req)); // RFC 7232 §3.1: a GET too
      sendUser(req, res, 200, record, wanted);
    },
    replace: async (req, res) => {
      const body = requireObjectBody(req);
      const next = toCanonicalUser(body); // a bad body is a 400 before the user is looked up
      const wanted = projectionOf(req);
      // A body without `active` leaves the user's state as it is (statesAttribute).
      const keepsActive = !statesAttribute(body, "active", "User");
      const record = await directory.updateUser(
        source(req),
        id(req),
        (current) => (keepsActive ? { ...next, active: current.resource.active !== false } : next),
        preconditionsOf(req),
      );
      sendUser(req, res, 200, record, wanted);
    },
    patch: async (req, res) => {
      const operations = normalizePatchRequest(requireObjectBody(req));
      const wanted = projectionOf(req);
      const record = await directory.updateUser(
        source(req),
        id(req),
        (current) => applyUserPatch(current.resource, operations),
        preconditionsOf(req),
      );
      sendUser(req, res, 200, record, wanted);
    },
    remove: async (req, res) => {
      await directory.deleteUser(source(req), id(req), preconditionsOf(req));
      sendScim(res, 204, undefined);
    },
  };
}
