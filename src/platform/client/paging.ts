/**
 * Streams a platform list page by page without holding it in memory: SCIM lists by
 * startIndex/count (RFC 7644 §3.4.2.4), cursor lists by first/after.
 */
import { PlatformError } from "../platform-error.js";

/** The contract's largest page, for both list kinds. */
export const MAX_PAGE_SIZE = 100;

export function clampPageSize(pageSize: number | undefined): number {
  if (pageSize === undefined) return MAX_PAGE_SIZE;
  return Math.max(1, Math.min(MAX_PAGE_SIZE, Math.floor(pageSize)));
}

export interface ScimPage<T> {
  totalResults?: number;
  Resources?: T[];
}

export interface PagesOptions {
  /** The client's name of the list call, named by a failure of the walk. */
  operation?: string;
  /** Told of a walk's failure before it is thrown (the client counts it as its calls' failures). */
  onBroken?: (err: PlatformError) => void;
}

/**
 * A list whose pages cannot be walked as the contract says: a break of the contract like an
 * answer of the wrong shape (permanent; the same pages would come back), named by its call. A list
 * that changed under its walk so that a page came twice is `transient`: read again later.
 */
function brokenList(options: PagesOptions, what: string, transient = false): PlatformError {
  const op = options.operation ?? "list";
  const err = new PlatformError(`${op}: ${what}`, {
    operation: op,
    failure: "invalid_response",
    transient,
  });
  options.onBroken?.(err);
  return err;
}

/** What a page is known by: its first resource's id (the contract requires one), else its JSON. */
function pageKey(first: unknown): string {
  const id = (first as { id?: unknown } | null)?.id;
  return typeof id === "string" ? `id:${id}` : `json:${JSON.stringify(first)}`;
}

export interface ScimPagesOptions extends PagesOptions {
  /**
   * Whether a failed page is to be asked again with half its count (an answer too large to read:
   * the contract sets no limit on a group's members). Down to one resource a page; then it fails.
   */
  smallerPageOn?: (err: unknown) => boolean;
}

/**
 * Yields every resource of a SCIM list. startIndex is 1-based (RFC 7644 §3.4.2.4); the walk
 * stops at an empty page or once totalResults resources were seen. A service provider may answer
 * fewer resources than asked (its own page limit, §3.4.2.4), so a short page says nothing about
 * the end: without a totalResults (the contract makes it optional) the walk goes on until a page
 * comes back empty.
 */
export async function* scimPages<T>(
  fetchPage: (startIndex: number, count: number) => Promise<ScimPage<T>>,
  pageSize?: number,
  options: ScimPagesOptions = {},
): AsyncGenerator<T> {
  let count = clampPageSize(pageSize);
  let startIndex = 1;
  /** The first resource of each page so far (pageKey): its page, its startIndex, the totalResults then. */
  const firsts = new Map<string, { page: number; startIndex: number; total: number | undefined }>();
  for (;;) {
    let page: ScimPage<T>;
    try {
      page = await fetchPage(startIndex, count);
    } catch (err) {
      // A page too large to read: the same page again, half as large; the walk keeps that size.
      if (count > 1 && options.smallerPageOn?.(err) === true) {
        count = Math.ceil(count / 2);
        continue;
      }
      throw err;
    }
    const resources = page.Resources ?? [];
    // A page that starts as one before it did: the platform ignores startIndex (a cycle of any
    // length), and without a totalResults the walk would never end; with one, the pages after the
    // first would be taken for the rest of the list. Fail it visibly instead. Unless the list moved
    // under the walk (a list newest first, a page's worth of creates between two pages), which is
    // no break of the contract: the earlier page's startIndex, asked again, no longer starts with
    // that resource (whether or not the pages carry a totalResults, which the contract makes
    // optional, and whether or not it changed: creates and deletes may balance). The walk then
    // fails as transient, to be read again, rather than yield a page twice.
    if (resources.length > 0) {
      const key = pageKey(resources[0]);
      const before = firsts.get(key);
      if (before !== undefined) {
        const moved = await startsElsewhere(fetchPage, before.startIndex, key);
        const totals =
          before.total !== undefined && page.totalResults !== undefined
            ? ` (totalResults ${before.total} at page ${before.page}, ${page.totalResults} now)`
            : "";
        throw moved
          ? brokenList(
              options,
              `the list changed while it was read${totals}: startIndex=${startIndex} started where page ${before.page} did`,
              true,
            )
          : brokenList(
              options,
              `the platform answered startIndex=${startIndex} with a page it answered before (page ${before.page}): it ignores startIndex`,
            );
      }
      firsts.set(key, { page: firsts.size + 1, startIndex, total: page.totalResults });
    }
    yield* resources;
    startIndex += resources.length;
    if (resources.length === 0) return;
    if (page.totalResults !== undefined && startIndex > page.totalResults) return;
  }
}

/**
 * Whether the page at `startIndex`, asked again (one resource), no longer starts with the resource
 * known by `key`: the list moved under the walk. A re-read that fails (the resource now there too
 * large to read, a dropped connection) tells nothing either way, and is taken as a move: the walk
 * fails as transient, to be read again, rather than for good as a broken contract.
 */
async function startsElsewhere<T>(
  fetchPage: (startIndex: number, count: number) => Promise<ScimPage<T>>,
  startIndex: number,
  key: string,
): Promise<boolean> {
  try {
    return pageKey((await fetchPage(startIndex, 1)).Resources?.[0]) !== key;
  } catch {
    return true;
  }
}

export interface CursorPage<T> {
  items: T[];
  pageInfo: { hasNextPage: boolean; endCursor?: string | null };
}

/**
 * Yields every item of a cursor list; stops when there is no next page. A page that says there is
 * a next one but gives no cursor to it, or a cursor the walk was already asked with (the page's
 * own, or one further back: a cycle), fails visibly as the call's contract break: stopping there
 * would hand a reconciliation part of the list as the whole of it (groups and members reported
 * missing that are there), and following the cycle would never end. The cursors asked with are
 * kept for the walk (one short string a page: a thousand for a 100,000-member group).
 */
export async function* cursorPages<T>(
  fetchPage: (first: number, after: string | undefined) => Promise<CursorPage<T>>,
  pageSize?: number,
  options: PagesOptions = {},
): AsyncGenerator<T> {
  const first = clampPageSize(pageSize);
  const askedWith = new Set<string>();
  let pages = 0;
  let after: string | undefined;
  for (;;) {
    const page = await fetchPage(first, after);
    pages++;
    yield* page.items;
    if (!page.pageInfo.hasNextPage) return;
    const next = page.pageInfo.endCursor;
    if (next === null || next === undefined || next === "") {
      throw brokenList(
        options,
        "the platform answered hasNextPage true without an endCursor: the list cannot go on",
      );
    }
    if (after !== undefined) askedWith.add(after);
    if (askedWith.has(next)) {
      throw brokenList(
        options,
        `the platform answered a cursor it was asked with before as the next page's (page ${pages}): the list would never end`,
      );
    }
    after = next;
  }
}

/** Splits a list into chunks of at most `size` (the contract's 100-per-call limits). */
export function chunk<T>(items: readonly T[], size: number = MAX_PAGE_SIZE): T[][] {
  const chunks: T[][] = [];
  for (let i = 0; i < items.length; i += size) chunks.push(items.slice(i, i + size));
  return chunks;
}
