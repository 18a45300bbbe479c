/**
 * Answers the contract (platform-api.yaml) allows but the emulator does not give by default: what
 * an independent implementation of the same contract may do. Every one is off unless asked for
 * (`variations` at start, or `setVariations`), so the default answers stay as documented.
 */

export interface AnswerVariations {
  /**
   * The server's own page limit: SCIM lists answer at most this many resources whatever `count`
   * asks (RFC 7644 §3.4.2.4), cursor lists at most this many items whatever `first` asks.
   * Default: none (a page is as large as asked, up to the contract's 100).
   */
  maxPageSize?: number;
  /**
   * The order of unfiltered lists (SCIM users and groups, every cursor list) and of the values of
   * multi-valued attributes (a user's emails, a group's members): `creation` (default) or `reverse`
   * (newest first, values last to first; an object created during a walk shifts the pages after it).
   */
  order?: "creation" | "reverse";
  /**
   * Leave out what the contract makes optional: a SCIM list's `schemas`, `totalResults`,
   * `startIndex`, `itemsPerPage` (and `Resources` when empty); a resource's `meta`; a user's
   * `active` when true; a group's `members` when empty; an embed group's `memberCount`;
   * `pageInfo.endCursor` on a last page. Default false.
   */
  sparse?: boolean;
  /**
   * Add fields the contract does not name (the bridge must ignore them): on every answer object,
   * on resources (an unknown extension, `groups`, `meta` extras), on emails and members, on
   * `pageInfo`, on bulk results; and an `ETag` header on single resources. Default false.
   */
  extraFields?: boolean;
  /**
   * The other answer the contract allows to a SCIM PATCH: `PATCH /Users/{id}` answers 204 without a
   * body, `PATCH /Groups/{id}` 200 with the group. Default false (200 with the user; 204).
   */
  otherPatchAnswers?: boolean;
  /**
   * RFC 7644 §3.5.2.2 / §3.12: a PATCH removing a group member that is not in the group fails with
   * 400 `noTarget` (the whole PATCH is refused). Default false (a missing member is ignored).
   */
  noTargetOnMissingMember?: boolean;
  /**
   * The cursor lists of a tenant that does not exist (its groups, its users) answer 200 with an
   * empty page instead of 404 (the contract documents neither). Default false (404).
   */
  emptyListForMissingTenant?: boolean;
}

/** Every variation at once: the most different answers the contract allows. */
export const ALL_VARIATIONS: Readonly<AnswerVariations> = Object.freeze({
  maxPageSize: 7,
  order: "reverse",
  sparse: true,
  extraFields: true,
  otherPatchAnswers: true,
  noTargetOnMissingMember: true,
  emptyListForMissingTenant: true,
});

/** Why a variations object cannot apply, or undefined. */
export function variationsProblem(v: AnswerVariations): string | undefined {
  if (v.maxPageSize !== undefined && !(Number.isInteger(v.maxPageSize) && v.maxPageSize >= 1)) {
    return "maxPageSize must be a positive integer";
  }
  if (v.order !== undefined && v.order !== "creation" && v.order !== "reverse") {
    return "order must be creation or reverse";
  }
  return undefined;
}

/** The page size answered when `asked` was asked for. */
export function pageSizeFor(v: AnswerVariations, asked: number): number {
  return v.maxPageSize === undefined ? asked : Math.min(asked, v.maxPageSize);
}

/** Items `offset` .. `offset + count` of a list of `total` items, in the variation's order. */
export function orderedSlice<T>(
  v: AnswerVariations,
  total: number,
  offset: number,
  count: number,
  take: (offset: number, count: number) => T[],
): T[] {
  if (v.order !== "reverse") return take(offset, count);
  // Reverse: position p of the answer is item total-1-p in creation order.
  const end = Math.max(0, total - offset);
  const start = Math.max(0, end - count);
  return take(start, end - start).reverse();
}

type Obj = Record<string, unknown>;

const EXTRA_EXTENSION = "urn:example:params:scim:schemas:extension:platform:2.0:User";

function isObj(value: unknown): value is Obj {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function sparseResource(resource: Obj): Obj {
  const out: Obj = { ...resource };
  delete out.meta;
  if (out.active === true) delete out.active;
  if (Array.isArray(out.members) && out.members.length === 0) delete out.members;
  delete out.memberCount;
  return out;
}

function extraResource(resource: Obj): Obj {
  const out: Obj = { ...resource, "x-platform-note": "ignore me" };
  if (typeof out.userName === "string") {
    out.schemas = [...((out.schemas as unknown[]) ?? []), EXTRA_EXTENSION];
    out[EXTRA_EXTENSION] = { seat: "viewer", lastLogin: null };
    out.groups = [];
    out.nickName = "";
    if (Array.isArray(out.emails)) {
      out.emails = out.emails.map((e) =>
        isObj(e) ? { ...e, display: String(e.value ?? ""), ...(e.primary ? {} : { primary: false }) } : e,
      );
    }
  }
  if (Array.isArray(out.members)) {
    out.members = out.members.map((m) => (isObj(m) ? { ...m, type: "User" } : m));
  }
  if (isObj(out.meta)) out.meta = { ...out.meta, "x-shard": 3 };
  return out;
}

function reversedValues(resource: Obj): Obj {
  const out: Obj = { ...resource };
  for (const key of ["emails", "members"]) {
    const values = out[key];
    if (Array.isArray(values)) out[key] = [...values].reverse();
  }
  return out;
}

function varyResource(v: AnswerVariations, resource: unknown): unknown {
  if (!isObj(resource)) return resource;
  let out = resource;
  if (v.order === "reverse") out = reversedValues(out);
  if (v.sparse) out = sparseResource(out);
  if (v.extraFields) out = extraResource(out);
  return out;
}

/**
 * A success answer's body with `sparse` and `extraFields` applied (a new object; the stored data is
 * untouched): SCIM lists, cursor lists, single resources and bulk results.
 */
export function varyBody(v: AnswerVariations, body: unknown): unknown {
  if (!isObj(body) || (!v.sparse && !v.extraFields && v.order !== "reverse")) return body;
  let out: Obj = { ...body };
  if (Array.isArray(out.Resources)) {
    out.Resources = out.Resources.map((r) => varyResource(v, r));
    if (v.sparse) {
      delete out.schemas;
      delete out.totalResults;
      delete out.startIndex;
      delete out.itemsPerPage;
      if ((out.Resources as unknown[]).length === 0) delete out.Resources;
    }
  } else if (Array.isArray(out.items)) {
    out.items = out.items.map((r) => varyResource(v, r));
    if (isObj(out.pageInfo)) {
      const pageInfo: Obj = { ...out.pageInfo };
      if (v.sparse && pageInfo.hasNextPage === false) delete pageInfo.endCursor;
      if (v.extraFields) {
        pageInfo.startCursor = null;
        pageInfo.totalCount = -1;
      }
      out.pageInfo = pageInfo;
    }
  } else if (typeof out.id === "string") {
    out = varyResource(v, out) as Obj;
  } else if (v.extraFields && Array.isArray(out.succeeded)) {
    out.skipped = [];
    out.failed = (out.failed as unknown[]).map((f) => (isObj(f) ? { ...f, retryable: false } : f));
  }
  if (v.extraFields) out["x-request-id"] = "emulator";
  return out;
}
