import { randomUUID } from "node:crypto";
import { IncomingMessage, type ServerResponse } from "node:http";
import type { RequestHandler } from "express";
// Types only: pino-http's declarations give IncomingMessage its `id` and `log` (this file keeps
// that shape without pino-http's per-request cost).
import type { ReqId } from "pino-http";
import type { Logger } from "../../src/observability/logger.js";
import {
  ANY_CORE_ATTRS,
  ENTERPRISE_ATTRS,
  knownExtensionUrn,
  parseAttrPath,
} from "../../src/scim/attribute-schema.js";

/** Paths whose requests are never logged (probes and scrapes would drown everything else). */
export const UNLOGGED_PATHS: readonly string[] = ["/healthz", "/readyz", "/metrics"];

export const REQUEST_ID_HEADER = "x-request-id";

const VALID_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** The caller's `x-request-id` when it is a sane token, else a fresh UUID (no log injection). */
export function requestIdFrom(header: string | string[] | undefined): string {
  const value = Array.isArray(header) ? header[0] : header;
  return value !== undefined && VALID_REQUEST_ID.test(value) ? value : randomUUID();
}

function pathOf(url: string | undefined): string {
  const raw = url ?? "/";
  const q = raw.indexOf("?");
  return q === -1 ? raw : raw.slice(0, q);
}

/** A path segment logged as it is: RFC 3986 unreserved characters and `:` (schema URNs), nothing encoded. */
const LOGGED_SEGMENT = /^[A-Za-z0-9._~:-]*$/;
/** A segment after which an entity id comes (SCIM `/Users/<id>`, admin `/users/<id>`, `/user/<id>`). */
const ENTITY_COLLECTION = /^(users|groups|user|group)$/i;
/** The bridge's ids (UUIDs): the only entity segments logged as they are. */
const BRIDGE_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Route words that follow an entity id (`/dead-letters/<source>/user/<id>/retry`). */
const AFTER_ID_WORDS = new Set(["retry"]);

/**
 * Where the source id stands in a path's segments (empty ones left out), by its first words:
 * `/scim/v2/<source>`, `/admin/v1/sources/<source>`, `/admin/v1/dead-letters/<source>`,
 * `/hooks/<source>`; -1 elsewhere. A source may be named `users` or `group`: there it is the
 * source, not a collection an entity id follows.
 */
function sourceIndex(words: readonly string[]): number {
  if (words[0] === "scim" && words[1] === "v2") return 2;
  if (words[0] === "admin" && words[1] === "v1" && (words[2] === "sources" || words[2] === "dead-letters"))
    return 3;
  if (words[0] === "hooks") return 1;
  return -1;
}

/**
 * The path of a line: route words, source ids, the bridge's ids (UUIDs) and schema URNs as they
 * are; any other segment as `…`. A client that puts a userName, an email or a name in the path
 * (`GET /Users/ada%40example.com`, `GET /Users/jsmith`: 404s) must not write it to the log: where an
 * entity id goes (after `Users`, `Groups`, `user`, `group`, but not after the source id, whatever
 * its name) only a bridge id or `.search` is kept, after it only a route word (AFTER_ID_WORDS), and
 * elsewhere `@`, `+`, spaces and anything percent-encoded (non-ASCII letters too) hide the segment.
 * Runs of slashes are read as the router reads them, as one (`/Users//jsmith` is `/Users/jsmith`).
 */
export function loggedPath(path: string): string {
  const segments = path.split("/");
  const words = segments.filter((segment) => segment !== "");
  const source = sourceIndex(words);
  let k = -1;
  let afterId = false;
  return segments
    .map((segment) => {
      if (segment === "") return segment;
      k += 1;
      const previous = k > 0 && k - 1 !== source ? (words[k - 1] ?? "") : "";
      if (afterId) return AFTER_ID_WORDS.has(segment) ? segment : "…";
      if (!ENTITY_COLLECTION.test(previous)) return LOGGED_SEGMENT.test(segment) ? segment : "…";
      afterId = true;
      return BRIDGE_ID.test(segment) || segment.toLowerCase() === ".search" ? segment : "…";
    })
    .join("/");
}

/**
 * The request headers a debug line may carry. Everything else is left out: a webhook's shared
 * secret may travel in any header an admin names (Okta Event Hooks), and redaction by name cannot
 * know it.
 */
export const LOGGED_HEADERS: readonly string[] = [
  "accept",
  "accept-encoding",
  "content-encoding",
  "content-length",
  "content-type",
  "host",
  "if-match",
  "if-none-match",
  "user-agent",
  "x-forwarded-for",
  "x-forwarded-proto",
  "x-request-id",
];

function allowedHeaders(headers: IncomingMessage["headers"]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const name of LOGGED_HEADERS) if (headers[name] !== undefined) out[name] = headers[name];
  return out;
}

/** Where a request keeps its root logger and its lazily created child logger. */
const ROOT = Symbol("scim-bridge.requestLogger.root");
const CHILD = Symbol("scim-bridge.requestLogger.child");

interface LoggedRequest extends IncomingMessage {
  [ROOT]?: Logger;
  [CHILD]?: Logger;
}

/**
 * `req.log`: a child logger carrying `reqId`, created on first use only (most requests never log
 * from a handler; a pino child per request was a measurable share of the intake's CPU). Defined
 * once on IncomingMessage.prototype; a request that did not pass through the middleware has none.
 */
function installLazyRequestLog(): void {
  const proto = IncomingMessage.prototype as LoggedRequest;
  if (Object.getOwnPropertyDescriptor(proto, "log")) return;
  Object.defineProperty(proto, "log", {
    configurable: true,
    get(this: LoggedRequest): Logger | undefined {
      if (this[CHILD] === undefined && this[ROOT] !== undefined) {
        this[CHILD] = this[ROOT].child({ reqId: this.id });
      }
      return this[CHILD];
    },
    set(this: LoggedRequest, value: Logger) {
      this[CHILD] = value;
    },
  });
}

const COMPARISON_OPERATORS = new Set(["eq", "ne", "co", "sw", "ew", "gt", "lt", "ge", "le"]);
const KEPT_WORDS = new Set(["pr", "and", "or", "not", "true", "false", "null"]);
const DELIMITERS = "()[]";
/** Sub-attribute names of the schemas, for `.value` after a value filter (`emails[...].value`). */
const SUB_ATTRIBUTE_NAMES: ReadonlySet<string> = new Set(
  [...ANY_CORE_ATTRS.values(), ...ENTERPRISE_ATTRS.values()].flatMap((def) => [...(def.sub?.keys() ?? [])]),
);

/**
 * Whether a word names an attribute of the User, Group or EnterpriseUser schema (any case, with or
 * without its schema URN), a known extension schema, or a sub-attribute (in a value filter, or
 * `.value` after one). Only such words are logged where a SCIM parameter names attributes: a word merely
 * shaped like one may be a login (`jane.doe`).
 */
function isSchemaAttribute(word: string): boolean {
  if (word.startsWith(".")) return SUB_ATTRIBUTE_NAMES.has(word.slice(1).toLowerCase());
  // Inside a value filter (`emails[type eq "work"]`) the names are the sub-attributes'.
  if (SUB_ATTRIBUTE_NAMES.has(word.toLowerCase())) return true;
  const path = parseAttrPath(word);
  if (!path) return false;
  if (path.attr === "") return path.urn !== undefined && knownExtensionUrn(path.urn) !== undefined;
  return path.def !== undefined && (path.sub === undefined || path.subDef !== undefined);
}

/**
 * A filter with its values hidden (`userName eq "ada@x.com"` -> `userName eq "…"`): the values
 * are userNames and emails, the shape is what a debugging operator needs. Every value after a
 * comparison operator is hidden, however it is quoted: `"…"`, `'…'`, or `…` for an unquoted one
 * (up to the next `and`, `or`, `not`, bracket or parenthesis). An unterminated literal is hidden
 * to the end. Outside values, only operators, keywords, brackets and the schemas' attribute names
 * are kept: anything else (a bare login or email, a word after an operator the filter grammar does
 * not have, `userName == jane.doe`) is hidden too.
 */
export function maskFilterLiterals(filter: string): string {
  let out = "";
  let inValue = false;
  let i = 0;
  while (i < filter.length) {
    const c = filter[i]!;
    if (/\s/.test(c)) {
      out += c;
      i += 1;
    } else if (DELIMITERS.includes(c)) {
      out += c;
      inValue = false;
      i += 1;
    } else if (c === '"' || c === "'") {
      let j = i + 1;
      while (j < filter.length && filter[j] !== c) j += filter[j] === "\\" ? 2 : 1;
      out += j < filter.length ? `${c}…${c}` : `${c}…`;
      i = j + 1;
    } else {
      let j = i;
      while (j < filter.length && !/\s/.test(filter[j]!) && !`${DELIMITERS}"'`.includes(filter[j]!)) j += 1;
      const word = filter.slice(i, j);
      const lower = word.toLowerCase();
      if (lower === "and" || lower === "or" || lower === "not") {
        out += word;
        inValue = false;
      } else if (!inValue && COMPARISON_OPERATORS.has(lower)) {
        out += word;
        inValue = true;
      } else if (!inValue && (KEPT_WORDS.has(lower) || isSchemaAttribute(word))) {
        out += word;
      } else if (inValue && (lower === "true" || lower === "false" || lower === "null")) {
        out += word;
      } else if (!out.endsWith("…")) {
        out += "…";
      }
      i = j;
    }
  }
  return out;
}

/**
 * How a debug line shows the SCIM list parameters (RFC 7644 §3.4.2) it may carry: `startIndex`
 * and `count` when a number, `sortOrder` when `ascending` or `descending`, the attribute lists
 * (`attributes`, `excludedAttributes`, `sortBy`) when every name in them is one of the schemas'
 * (isSchemaAttribute); otherwise `…`, as any other parameter's value (`?userName=ada@example.com`).
 * `filter` is logged masked (maskFilterLiterals).
 */
const LOGGED_QUERY_PARAMETERS: ReadonlyMap<string, (value: string) => boolean> = new Map([
  ["startindex", (v: string) => /^\d{1,10}$/.test(v)],
  ["count", (v: string) => /^\d{1,10}$/.test(v)],
  ["sortorder", (v: string) => /^(ascending|descending)$/i.test(v)],
  ["attributes", attributeList],
  ["excludedattributes", attributeList],
  ["sortby", attributeList],
]);

function attributeList(value: string): boolean {
  return value.split(",").every((name) => isSchemaAttribute(name.trim()));
}

/**
 * The query of a debug line: the names of `filter`, the list parameters and the schemas' attributes
 * (`?userName=…`), with values only of the list parameters (any case); any other parameter, whose
 * very name may be a login (`?jane.doe@example.com`), is only counted (`"…": 2`).
 */
function loggedQuery(query: unknown): unknown {
  if (typeof query !== "object" || query === null) return query;
  const out: Record<string, unknown> = {};
  let others = 0;
  for (const [name, value] of Object.entries(query)) {
    const lower = name.toLowerCase();
    const shown = LOGGED_QUERY_PARAMETERS.get(lower);
    if (lower === "filter") {
      if (typeof value === "string") out[name] = maskFilterLiterals(value);
      else if (Array.isArray(value))
        out[name] = value.map((v) => (typeof v === "string" ? maskFilterLiterals(v) : "…"));
      else out[name] = "…";
    } else if (shown && typeof value === "string") {
      out[name] = shown(value) ? value : "…";
    } else if (shown && isPlain(value)) {
      out[name] = (value as string[]).map((v) => (shown(v) ? v : "…"));
    } else if (shown || isSchemaAttribute(name)) {
      out[name] = "…";
    } else {
      others += 1;
    }
  }
  if (others > 0) out["…"] = others;
  return out;
}

/** A string, or an array of strings (not a nested object a parser built from `a[b]=c`). */
function isPlain(value: unknown): boolean {
  return typeof value === "string" || (Array.isArray(value) && value.every((v) => typeof v === "string"));
}

/**
 * The `req` part of a line: method and path (loggedPath) only above debug (RFC 7644 filters carry
 * userNames).
 */
function requestPart(req: IncomingMessage, path: string, debug: boolean): Record<string, unknown> {
  const line: Record<string, unknown> = { id: req.id, method: req.method, url: loggedPath(path) };
  if (debug) {
    line.query = loggedQuery((req as IncomingMessage & { query?: unknown }).query);
    line.headers = allowedHeaders(req.headers);
    line.remoteAddress = req.socket?.remoteAddress;
  }
  return line;
}

/**
 * One line per request when its response finishes (or the client hangs up first), as pino-http
 * wrote it: `{req: {id, method, url}, res: {statusCode}, responseTime, msg}`; 5xx at error level.
 * Request ids: the caller's `x-request-id` when it is a sane token, else a fresh UUID, echoed in
 * the response header. No line for health, readiness and metrics requests. The root logger's
 * redaction list (REDACT_PATHS) applies, and no bodies are logged. Above debug a line holds the
 * method, the path without its query string (segments that may be personal data masked:
 * loggedPath) and the status; at debug the query (its filter's
 * values masked, other parameters' values only for LOGGED_QUERY_PARAMETERS) and headers are
 * added (request headers from LOGGED_HEADERS only), still redacted. `req.log` is a child logger carrying `reqId` for handlers.
 */
export function createRequestLogger(logger: Logger): RequestHandler {
  installLazyRequestLog();
  return (req, res, next) => {
    const raw = req as unknown as LoggedRequest;
    const id = requestIdFrom(req.headers[REQUEST_ID_HEADER]);
    raw.id = id as ReqId;
    raw[ROOT] = logger;
    res.setHeader(REQUEST_ID_HEADER, id);
    // Taken now: routers rewrite req.url while they handle the request.
    const path = pathOf(req.url);
    if (UNLOGGED_PATHS.includes(path)) return next();
    const started = performance.now();
    // 'close' follows 'finish' on every response, and comes alone when the client hung up first.
    res.once("close", () => {
      const debug = logger.isLevelEnabled("debug");
      const response = res as unknown as ServerResponse;
      const line = {
        req: requestPart(raw, path, debug),
        res: debug
          ? { statusCode: response.statusCode, headers: response.getHeaders() }
          : { statusCode: response.statusCode },
        responseTime: Math.round(performance.now() - started),
      };
      if (!response.writableFinished) logger.warn(line, "request aborted");
      else if (response.statusCode >= 500) logger.error(line, "request errored");
      else logger.info(line, "request completed");
    });
    next();
  };
}
