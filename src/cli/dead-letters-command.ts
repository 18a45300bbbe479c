import { parseRef } from "./admin-arguments.js";
import { type CliIo, type Client, expectShape, PAGE, seg } from "./admin-client.js";
import { UsageError } from "./admin-errors.js";
import type { Values } from "./admin-forms.js";
import { show } from "./admin-format.js";
import { adviceLines } from "./dead-letter-advice.js";

interface DeadLetterLine {
  ref: Record<string, string>;
  code: string;
  reason: string;
  at: string;
}

/** The heading and its lines, or nothing when there are none. */
function withHeading(heading: string, lines: string[]): string[] {
  return lines.length === 0 ? [] : [heading, ...lines];
}

/** Dead letters read per page (the admin API's largest). */
const DEAD_LETTER_PAGE = 500;

/**
 * Every dead letter (of a source), page by page: the admin API answers at most 500 at a time, and an
 * operator asking what failed must see all of it, not the oldest 500 under a total of thousands.
 * The list is oldest first; it is read from the newest end down, so a letter that goes meanwhile
 * (its entity synced, or retried) only shifts letters already read, never one still to read. A
 * letter added or written again meanwhile lands at the newest end, already passed: that end is read
 * again, down to the newest letter the first reading began with. Printed oldest first.
 */
async function allDeadLetters(
  api: Client,
  source: string | undefined,
): Promise<{ total: number; items: DeadLetterLine[] }> {
  const filter = source ? `source=${seg(source)}&` : "";
  const read = async (offset: number, limit: number) => {
    const path = `/dead-letters?${filter}offset=${offset}&limit=${limit}`;
    const page = expectShape(await api.call("GET", path), "/dead-letters", PAGE);
    return { total: Number(page.total ?? 0), items: (page.items ?? []) as DeadLetterLine[] };
  };
  const walk = async (stopAt?: string) => {
    const pages: DeadLetterLine[][] = [];
    const { total } = await read(0, 1);
    for (let end = total; end > 0; end -= DEAD_LETTER_PAGE) {
      const offset = Math.max(0, end - DEAD_LETTER_PAGE);
      const items = (await read(offset, end - offset)).items;
      pages.unshift(items);
      if (stopAt !== undefined && items.some((d) => d.at <= stopAt)) break;
    }
    return pages.flat();
  };
  const all = await walk();
  // A letter written again meanwhile (its entity failed again) moved to the newest end, already
  // read: the letters newer than the newest the walk began with are read again from that end.
  const newest =
    all
      .map((d) => d.at)
      .sort()
      .at(-1) ?? "";
  const since = all.length > 0 ? await walk(newest) : [];
  const byRef = new Map<string, DeadLetterLine>();
  for (const d of [...all, ...since]) {
    const key = `${d.ref.source}/${d.ref.kind}/${d.ref.id}`;
    byRef.delete(key); // its latest reading, in its latest place
    byRef.set(key, d);
  }
  return { total: byRef.size, items: [...byRef.values()] };
}

/**
 * `dead-letters [list] | retry [REF]... | discard REF`: what failed for good, sending it again, or
 * letting it go.
 */
export async function deadLettersCommand(
  api: Client,
  io: CliIo,
  values: Values,
  positionals: string[],
): Promise<number> {
  const [action = "list", ...rest] = positionals;
  if (action === "list") {
    const page = await allDeadLetters(api, values.source);
    show(io, values.json, page, () =>
      [
        `${page.total} dead letter(s)`,
        ...page.items.map(
          (d) => `${d.ref.source}/${d.ref.kind}/${d.ref.id}  ${d.code}  ${d.reason}  ${d.at}`,
        ),
        ...withHeading("what to do, by code:", adviceLines(page.items.map((d) => d.code))),
      ].join("\n"),
    );
    return 0;
  }
  if (action === "retry") {
    const body = rest.length > 0 ? { refs: rest.map(parseRef) } : {};
    const result = expectShape(await api.call("POST", "/dead-letters/retry", body), "/dead-letters/retry", {
      retried: "number",
    });
    // Named references that are no dead letter (a typo, or retried already) are not silently fine.
    const missed = rest.length > 0 && Number(result.retried) < rest.length;
    show(
      io,
      values.json,
      result,
      () =>
        `retried ${result.retried}${missed ? ` of ${rest.length} named: the others are no dead letter (see dead-letters list)` : ""}`,
    );
    return missed ? 1 : 0;
  }
  if (action === "discard") {
    const ref = parseRef(rest[0] as string);
    const result = await api.call(
      "DELETE",
      `/dead-letters/${seg(ref.source)}/${seg(ref.kind)}/${seg(ref.id)}`,
    );
    show(io, values.json, result, () => discardedText(rest[0] as string, result));
    return 0;
  }
  throw new UsageError(`dead-letters: unknown action ${action}`);
}

/** What `dead-letters discard` says: and, for a deleted entity's letter, that its platform object was let go. */
function discardedText(ref: string, answer: unknown): string {
  const released = (answer as { released?: unknown } | null)?.released === true;
  if (!released) return `discarded ${ref}`;
  const kind = ref.split("/")[1] ?? "object";
  return [
    `discarded ${ref}`,
    `released: its platform ${kind} stays on the platform, owned by no source (the bridge no longer deprovisions it):`,
    "  the deleted entity's platform object was let go, left as it is;",
    // Only users are orphans (src/reconcile/classify-group.ts): a released group is reported by nothing.
    kind === "group"
      ? "  reconciliation does not report groups as orphans: remove it on the platform if it should go"
      : "  reconciliation reports it as an orphan (the reconcile.orphans policy decides)",
  ].join("\n");
}
