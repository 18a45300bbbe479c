import type { ResourceHandlers } from "./scim-http.js";

/**
 * Which SCIM route a request is for, decided from its method and path alone (no I/O): the routing
 * table of /scim/v2/<source>. Matching follows express's defaults, which routed these paths before:
 * names case-insensitively, one trailing slash allowed, path parameters percent-decoded, HEAD
 * served as GET. Unlike express, a run of slashes after the source is one slash (`/okta//Users` is
 * `/okta/Users`, `/Users//` is `/Users/`): identity providers whose base URL ends in "/" send them.
 * Only literal slashes of the path: not the query string, not `%2F` (ids are decoded per segment,
 * after the split). A source is still the first segment after `/scim/v2/` (`/scim/v2//okta` is not
 * a SCIM path).
 */
export type ScimRoute =
  | { kind: "discovery"; endpoint: "ServiceProviderConfig" | "ResourceTypes" | "Schemas"; id?: string }
  | {
      kind: "resource";
      resource: "Users" | "Groups";
      action: keyof ResourceHandlers;
      /** The resource's id (decoded), for get, replace, patch and remove. */
      id?: string;
      /** Whether the handler reads a JSON body. */
      body: boolean;
    }
  /** A query at the server root (RFC 7644 §3.4.2.1): GET / (list), POST /.search (search). */
  | { kind: "root"; action: "list" | "search"; body: boolean }
  /** A known path, a method it does not serve: 405 with `Allow` (`open`: before authentication). */
  | { kind: "notAllowed"; allow: string; open?: boolean }
  /** /Bulk and /Me: 501. */
  | { kind: "notImplemented" }
  | { kind: "notFound" }
  /** A path parameter that is not valid percent-encoding: 400. */
  | { kind: "badPath" };

/** A SCIM request's target: the source and the path below /scim/v2/<source>. */
export interface ScimTarget {
  source: string;
  /**
   * The path after the source, e.g. `/Users/abc` (`/` for the source's root); no query string, and
   * each run of slashes made one (`//Users` is `/Users`).
   */
  rest: string;
}

const PREFIX = "/scim/v2/";

/**
 * Splits `/scim/v2/<source>/<rest>?query` (the prefix case-insensitively, as express matched its
 * mount path). Undefined for other paths, and for a source that is not valid percent-encoding.
 */
export function scimTargetOf(url: string): ScimTarget | undefined {
  if (url.length < PREFIX.length || url.slice(0, PREFIX.length).toLowerCase() !== PREFIX) return undefined;
  const query = url.indexOf("?", PREFIX.length);
  const path = query === -1 ? url : url.slice(0, query);
  const slash = path.indexOf("/", PREFIX.length);
  const raw = slash === -1 ? path.slice(PREFIX.length) : path.slice(PREFIX.length, slash);
  if (raw === "") return undefined;
  const source = decodeSegment(raw);
  if (source === undefined) return undefined;
  return { source, rest: slash === -1 ? "/" : collapseSlashes(path.slice(slash)) };
}

/** `path` with each run of slashes made one (`//Users//` is `/Users/`); `%2F` is not a slash here. */
function collapseSlashes(path: string): string {
  return path.includes("//") ? path.replace(/\/{2,}/g, "/") : path;
}

const RESOURCE_ALLOW = "GET, POST";
const ENTITY_ALLOW = "GET, PUT, PATCH, DELETE";
const SEARCH_ALLOW = "POST";

/** The route of `method` on `rest` (ScimTarget.rest; runs of slashes count as one). */
export function matchScimRoute(method: string, target: string): ScimRoute {
  const verb = method === "HEAD" ? "GET" : method;
  const rest = collapseSlashes(target);
  if (rest === "/") {
    return verb === "GET"
      ? { kind: "root", action: "list", body: false }
      : { kind: "notAllowed", allow: "GET" };
  }
  // One trailing slash is allowed (express's non-strict routing); "/Users//" was collapsed to it.
  const path = rest.length > 1 && rest.endsWith("/") ? rest.slice(0, -1) : rest;
  const segments = path.split("/"); // segments[0] is "" (the path starts with "/")
  const first = segments[1]?.toLowerCase() ?? "";
  const count = segments.length - 1;

  if (count === 1 && first === ".search") {
    if (verb === "POST") return { kind: "root", action: "search", body: true };
    return { kind: "notAllowed", allow: SEARCH_ALLOW };
  }

  if (first === "serviceproviderconfig" || first === "resourcetypes" || first === "schemas") {
    const endpoint =
      first === "serviceproviderconfig"
        ? "ServiceProviderConfig"
        : first === "schemas"
          ? "Schemas"
          : "ResourceTypes";
    if (count > 2 || (count === 2 && endpoint === "ServiceProviderConfig")) return { kind: "notFound" };
    const raw = segments[2];
    if (raw === "") return { kind: "notFound" };
    // Discovery is readable without a token: a write method is refused before any body is read.
    if (verb !== "GET") return { kind: "notAllowed", allow: "GET", open: true };
    if (raw === undefined) return { kind: "discovery", endpoint };
    const id = decodeSegment(raw);
    return id === undefined ? { kind: "badPath" } : { kind: "discovery", endpoint, id };
  }
  if (first === "users" || first === "groups") {
    const resource = first === "users" ? "Users" : "Groups";
    if (count === 1) {
      if (verb === "GET") return { kind: "resource", resource, action: "list", body: false };
      if (verb === "POST") return { kind: "resource", resource, action: "create", body: true };
      return { kind: "notAllowed", allow: RESOURCE_ALLOW };
    }
    const raw = segments[2] as string;
    if (count > 2 || raw === "") return { kind: "notFound" };
    if (raw.toLowerCase() === ".search") {
      if (verb === "POST") return { kind: "resource", resource, action: "search", body: true };
      return { kind: "notAllowed", allow: SEARCH_ALLOW };
    }
    const action = ENTITY_ACTIONS[verb];
    if (action === undefined) return { kind: "notAllowed", allow: ENTITY_ALLOW };
    const id = decodeSegment(raw);
    if (id === undefined) return { kind: "badPath" };
    return { kind: "resource", resource, action, id, body: action === "replace" || action === "patch" };
  }
  if (count === 1 && (first === "bulk" || first === "me")) return { kind: "notImplemented" };
  return { kind: "notFound" };
}

const ENTITY_ACTIONS: Record<string, keyof ResourceHandlers | undefined> = {
  __proto__: null as never,
  GET: "get",
  PUT: "replace",
  PATCH: "patch",
  DELETE: "remove",
};

/** The route's template for metrics labels: never an id or a source name. */
export function templateOf(route: ScimRoute, rest: string): string | undefined {
  switch (route.kind) {
    case "resource":
      return `/scim/v2/:source/${route.resource}${
        route.action === "search" ? "/.search" : route.id === undefined ? "" : "/:id"
      }`;
    case "discovery":
      return `/scim/v2/:source/${route.endpoint}${route.id === undefined ? "" : "/:id"}`;
    case "root":
      return route.action === "search" ? "/scim/v2/:source/.search" : "/scim/v2/:source/";
    case "notAllowed":
    case "notImplemented": {
      // Known paths only, so the label set stays bounded.
      const path = collapseSlashes(rest);
      if (path === "/") return "/scim/v2/:source/";
      const [, first = "", second] = path.split("/");
      const name = canonicalName(first);
      if (name === undefined) return undefined;
      if (second === undefined || second === "") return `/scim/v2/:source/${name}`;
      return `/scim/v2/:source/${name}/${second.toLowerCase() === ".search" ? ".search" : ":id"}`;
    }
    default:
      return undefined;
  }
}

const CANONICAL: Record<string, string> = {
  ".search": ".search",
  users: "Users",
  groups: "Groups",
  bulk: "Bulk",
  me: "Me",
  serviceproviderconfig: "ServiceProviderConfig",
  resourcetypes: "ResourceTypes",
  schemas: "Schemas",
};

function canonicalName(segment: string): string | undefined {
  const key = segment.toLowerCase();
  return Object.hasOwn(CANONICAL, key) ? CANONICAL[key] : undefined;
}

/** A path segment percent-decoded; undefined when it is not valid percent-encoding. */
function decodeSegment(segment: string): string | undefined {
  if (!segment.includes("%")) return segment;
  try {
    return decodeURIComponent(segment);
  } catch {
    return undefined;
  }
}
