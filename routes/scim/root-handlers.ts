import type { Request, RequestHandler } from "express";
import { BadRequestError } from "../../src/errors.js";
import type { FilterNode } from "../../src/scim/filter-types.js";
import { projectResource } from "../../src/scim/projection.js";
import { type JsonObject, SCHEMA_LIST } from "../../src/scim/scim-types.js";
import {
  type ListParams,
  listQueryOf,
  membersExcluded,
  parseListParams,
  searchRequest,
} from "./list-params.js";
import { renderGroup, renderUser, scimBaseUrl } from "./scim-render.js";
import { type ScimRouterDeps, requireObjectBody, sendScim } from "./scim-http.js";

/** A filter that matches none of a type's resources. */
const NONE = Symbol("none");
const EMPTY_PAGE = { totalResults: 0, items: [] } as const;

/**
 * The root query's filter as resources of `type` read it, or NONE: a filter that only the other
 * type can read (a path qualified by that type's core schema URN, which /Users or /Groups answer
 * 400 invalidFilter) matches none of this type's resources. `typeless` is the query parsed without
 * a type, which a filter no type can read already failed (400).
 */
function filterOf(
  input: Record<string, unknown>,
  type: "User" | "Group",
  typeless: ListParams,
): FilterNode | undefined | typeof NONE {
  try {
    return parseListParams(input, type).filter;
  } catch (err) {
    if (err instanceof BadRequestError && typeless.filter !== undefined) return NONE;
    throw err;
  }
}

/** The query handlers of the server root: GET / and POST /.search. */
export interface RootHandlers {
  list: RequestHandler;
  search: RequestHandler;
}

/**
 * Queries at the server root (RFC 7644 §3.4.2.1: "all resources within the server SHALL be
 * included, subject to filtering"; §3.4.3: POST /.search at the root searches all resource types),
 * with the same parameters as /Users and /Groups: filter, startIndex, count, attributes,
 * excludedAttributes. Results are the source's users, then its groups, each in creation order, so
 * pages are stable; each carries its `schemas` (returned always) and, unless projected away,
 * `meta.resourceType`. A filter is applied to each type as that type's list applies it: an
 * attribute a type does not have matches none of its resources (`meta.resourceType eq "Group"`
 * selects one type). totalResults counts both types. The two types are read one after the other,
 * not as one snapshot (no more than two pages of one type are).
 */
export function createRootHandlers({ directory }: ScimRouterDeps): RootHandlers {
  const query = async (req: Request, input: Record<string, unknown>): Promise<JsonObject> => {
    const source = String(req.params.source);
    // Parsed per type: the filter parser trims the literals of the name each type stores trimmed.
    const params = parseListParams(input);
    const userFilter = filterOf(input, "User", params);
    const groupFilter = filterOf(input, "Group", params);
    const base = scimBaseUrl(req, source);
    const from = params.startIndex - 1;
    const to = from + params.count;
    const users =
      userFilter === NONE ? EMPTY_PAGE : await directory.listUsers(source, { ...params, filter: userFilter });
    // The groups' part of the window [from, to) once the users' totalResults are before it.
    const groupFrom = Math.max(0, from - users.totalResults);
    const groupTo = Math.max(0, to - users.totalResults);
    const groups =
      groupFilter === NONE
        ? EMPTY_PAGE
        : await directory.listGroups(source, {
            filter: groupFilter,
            startIndex: groupFrom + 1,
            count: groupTo - groupFrom,
            withMembers: !membersExcluded(params),
          });
    const project = (resource: JsonObject) => projectResource(resource, params);
    const resources = [
      ...users.items.map((u) => project(renderUser(u, base))),
      ...groups.items.map((g) => project(renderGroup(g, base))),
    ];
    return {
      schemas: [SCHEMA_LIST],
      totalResults: users.totalResults + groups.totalResults,
      startIndex: params.startIndex,
      itemsPerPage: resources.length,
      Resources: resources,
    };
  };

  return {
    list: async (req, res) => {
      sendScim(res, 200, await query(req, listQueryOf(req)));
    },
    search: async (req, res) => {
      sendScim(res, 200, await query(req, searchRequest(requireObjectBody(req))));
    },
  };
}
