import { parseRef, readArguments } from "./admin-arguments.js";
import {
  adminClient,
  type CliIo,
  type Client,
  expectShape,
  PAGE,
  RESYNC,
  RUN,
  type Shape,
  seg,
} from "./admin-client.js";
import { RequestError, UsageError } from "./admin-errors.js";
import { type Values, usageFor } from "./admin-forms.js";
import { isPast, type Outcome, resyncSummary, runSummary, show } from "./admin-format.js";

/**
 * The CLI's admin commands: `status`, `resync`, `reconcile`, `dead-letters`, `audit`. They talk to the admin
 * API over HTTP. Exit codes: 0 ok, 1 failure (or not idle / needs attention where that is the
 * question), 2 usage.
 */
export type { CliIo } from "./admin-client.js";
export { ADMIN_USAGE } from "./admin-forms.js";

const defaultIo = (): CliIo => ({
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
  env: process.env,
  fetch: globalThis.fetch,
});

const SETTLED = ["succeeded", "failed", "awaiting-confirmation", "discarded"];

async function waitSettled(
  api: Client,
  path: string,
  shape: Shape,
  io: CliIo,
  timeoutMs: number,
): Promise<Record<string, unknown>> {
  const deadline = Date.now() + timeoutMs;
  // Between two looks, never past the deadline (the last look is at it).
  const pause = () =>
    new Promise((resolve) =>
      setTimeout(resolve, Math.max(0, Math.min(io.pollMs ?? 500, deadline - Date.now()))),
    );
  for (;;) {
    let answer: Record<string, unknown>;
    try {
      answer = await api.call("GET", path, undefined, deadline);
    } catch (err) {
      // The run goes on while the bridge restarts (a rolling deploy) or Redis fails over: the wait
      // asks again until its deadline, then says what it last got.
      if (!(err instanceof RequestError && err.transient)) throw err;
      if (Date.now() >= deadline)
        throw new RequestError(`timed out waiting for ${path} (last: ${err.message})`);
      await pause();
      continue;
    }
    const current = expectShape(answer, path, shape);
    if (SETTLED.includes(String(current.state))) return current;
    if (Date.now() >= deadline) {
      // A run or resync that enqueued its work waits for it to sync: say how much is left.
      const repairs = current.repairs as { outcome?: Outcome } | undefined;
      const outcome = (current.outcome ?? repairs?.outcome) as Outcome | undefined;
      const left = outcome
        ? ` (${current.state}: ${outcome.pending} entities not settled yet, ${outcome.failed} failed so far)`
        : ` (${current.state})`;
      throw new RequestError(`timed out waiting for ${path}${left}`);
    }
    await pause();
  }
}

async function status(api: Client, io: CliIo, values: Values, positionals: string[]): Promise<number> {
  const json = values.json;
  const userName = values["user-name"];
  const groupName = values["group-name"];
  if (userName !== undefined || groupName !== undefined) {
    const source = positionals[0] as string;
    const kind = userName !== undefined ? "user" : "group";
    const query: [string, string] =
      userName !== undefined ? ["userName", userName] : ["displayName", groupName as string];
    const path = `/sources/${seg(source)}/${kind}s?${new URLSearchParams([query])}`;
    const found = await api.call("GET", path);
    const id = (found.items as Array<{ id?: unknown }> | undefined)?.[0]?.id;
    if (typeof id !== "string") throw new RequestError(`no ${kind} of that name in source ${source}`);
    return entityStatus(api, io, json, { source, kind, id });
  }
  if (positionals[0] !== undefined) return entityStatus(api, io, json, parseRef(positionals[0]));
  const body = expectShape(await api.call("GET", "/status"), "/status", { idle: "boolean" });
  show(io, json, body, () => {
    const sources = Object.entries((body.sources ?? {}) as Record<string, Record<string, number>>)
      .map(([id, c]) => `  ${id}: ${c.users} users, ${c.groups} groups, ${c.deadLetters} dead letters`)
      .join("\n");
    const queues = Object.entries((body.queues ?? {}) as Record<string, Record<string, number>>)
      .map(
        ([name, counts]) =>
          `  ${name}: ${Object.entries(counts)
            .map(([state, n]) => `${state} ${n}`)
            .join(", ")}`,
      )
      .join("\n");
    const held = ((body.awaitingConfirmation ?? []) as Array<Record<string, unknown>>)
      .map((op) => {
        const guard =
          op.plannedDeprovisions === undefined
            ? ""
            : `: ${op.plannedDeprovisions} of ${op.ownedUsers} users to deprovision`;
        const settle = `scim-bridge ${op.kind} --show ${op.id} (then --confirm or --discard)`;
        return `  ${op.kind} ${op.id} (${op.source})${guard}; ${settle}`;
      })
      .join("\n");
    const late = body.lateWrites as { count?: number; until?: string | null } | undefined;
    // Why a bridge with empty queues is not idle: writes that may still land (one line, when any).
    const lateLine =
      late?.count && late.count > 0
        ? `\nlate writes: ${late.count} may still land on the platform (${isPast(late.until) ? "their time is up: read again now" : `checked by ${late.until ?? "?"}`})`
        : "";
    return `idle: ${body.idle}\npending: ${body.pending}${lateLine}\ndead letters: ${body.deadLetters}\nawaiting confirmation:${held ? `\n${held}` : " none"}\nsources:\n${sources}\nqueues:\n${queues}`;
  });
  return body.idle === true ? 0 : 1;
}

/** One entity's sync status (GET /sources/<source>/users|groups/<id>): exit 0 when synced. */
async function entityStatus(
  api: Client,
  io: CliIo,
  json: boolean,
  ref: { source: string; kind: string; id: string },
): Promise<number> {
  const path = `/sources/${seg(ref.source)}/${seg(ref.kind)}s/${seg(ref.id)}`;
  const body = expectShape(await api.call("GET", path), path, { state: "string" });
  show(io, json, body, () => {
    const applied = body.lastApplied as { generation: number; at: string | null } | null;
    const error = body.lastError as {
      code?: string;
      message?: string;
      at?: string;
      discardedBy?: string;
      discardedAt?: string;
    } | null;
    const again =
      error?.discardedAt !== undefined
        ? [
            `  discarded:    by ${error.discardedBy ?? "?"} at ${error.discardedAt}`,
            `  sync again:   scim-bridge resync ${ref.source} --${ref.kind} ${ref.id}`,
          ]
        : [`  retry with:   scim-bridge dead-letters retry ${ref.source}/${ref.kind}/${ref.id}`];
    return [
      `${ref.source}/${ref.kind}/${ref.id}: ${body.state}${body.deletedAtSource ? " (deleted at the source)" : ""}`,
      `  platform id:  ${body.platformId ?? "none yet"}`,
      `  generation:   ${body.generation ?? "-"}, last applied: ${applied ? `${applied.generation} at ${applied.at}` : "never"}`,
      ...(error ? [`  last error:   ${error.code ?? ""} ${error.message ?? ""} (${error.at ?? "?"})`] : []),
      ...(typeof body.lateWriteUntil === "string"
        ? [
            isPast(body.lateWriteUntil)
              ? "  late write:   its time is up: read again now"
              : `  late write:   may still land; waits until ${body.lateWriteUntil}`,
          ]
        : []),
      ...(body.state === "dead" ? again : []),
    ].join("\n");
  });
  return body.state === "synced" ? 0 : 1;
}

/**
 * What `resync` and `reconcile` share for an operation the deprovisioning guard may hold:
 * `--confirm ID` / `--discard ID` settle it, `--show ID` reads it, `--list [--source S]` lists them.
 * Answers the exit code, or undefined when none of these was asked.
 */
async function heldOperation(
  api: Client,
  io: CliIo,
  values: Values,
  kind: {
    /** The admin API's collection, e.g. "/resyncs". */
    path: string;
    /** The fields an operation's answer has. */
    shape: Shape;
    summary(op: Record<string, unknown>): string;
    /** What a confirm or discard prints. */
    settled(op: Record<string, unknown>): string;
    /** One line of the list. */
    line(op: Record<string, unknown>): string;
    /** What the list holds, e.g. "resyncs". */
    plural: string;
  },
): Promise<number | undefined> {
  const settle =
    values.confirm !== undefined ? "confirm" : values.discard !== undefined ? "discard" : undefined;
  if (settle) {
    const path = `${kind.path}/${seg(values.confirm ?? values.discard ?? "")}/${settle}`;
    const op = expectShape(await api.call("POST", path), path, kind.shape);
    show(io, values.json, op, () => kind.settled(op));
    return 0;
  }
  if (values.show !== undefined) {
    const path = `${kind.path}/${seg(values.show)}`;
    const op = expectShape(await api.call("GET", path), path, kind.shape);
    show(io, values.json, op, () => kind.summary(op));
    return 0;
  }
  if (values.list) {
    const query = values.source ? `?source=${seg(values.source)}` : "";
    const page = expectShape(await api.call("GET", `${kind.path}${query}`), kind.path, PAGE);
    const items = (page.items ?? []) as Array<Record<string, unknown>>;
    const total = typeof page.total === "number" ? page.total : items.length;
    show(io, values.json, page, () => {
      // An empty list says so (a blank line read as nothing printed); a page says it is one.
      if (items.length === 0) return `no ${kind.plural}${values.source ? ` of source ${values.source}` : ""}`;
      const more = total > items.length ? [`(the newest ${items.length} of ${total})`] : [];
      return [...items.map(kind.line), ...more].join("\n");
    });
    return 0;
  }
  return undefined;
}

async function resync(api: Client, io: CliIo, values: Values, positionals: string[]): Promise<number> {
  const handled = await heldOperation(api, io, values, {
    path: "/resyncs",
    shape: RESYNC,
    summary: resyncSummary,
    settled: resyncSummary,
    line: (op) => `${op.id}  ${op.source}  ${op.state}  ${op.createdAt}`,
    plural: "resyncs",
  });
  if (handled !== undefined) return handled;
  const source = positionals[0];
  if (!source) throw new UsageError("resync needs a source (or --show/--confirm/--discard OP, --list)");
  const body = values.user || values.group ? { users: values.user ?? [], groups: values.group ?? [] } : {};
  const path = `/sources/${seg(source)}/resync`;
  let op = expectShape(await api.call("POST", path, body), path, RESYNC);
  if (values.wait)
    op = await waitSettled(api, `/resyncs/${seg(String(op.id))}`, RESYNC, io, timeoutMs(values));
  const unknown = Array.isArray(op.unknown) ? (op.unknown as string[]) : [];
  show(io, values.json, op, () => resyncSummary({ source, ...op }));
  return !values.wait || (op.state === "succeeded" && unknown.length === 0) ? 0 : 1;
}

async function reconcile(api: Client, io: CliIo, values: Values, positionals: string[]): Promise<number> {
  const handled = await heldOperation(api, io, values, {
    path: "/reconcile-runs",
    shape: RUN,
    summary: runSummary,
    settled: (run) => `run ${run.runId}: ${run.state}`,
    line: (r) => `${r.runId}  ${r.source}  ${r.state}${r.dryRun ? " [dry run]" : ""}  ${r.createdAt}`,
    plural: "reconciliation runs",
  });
  if (handled !== undefined) return handled;
  const source = positionals[0];
  if (!source) throw new UsageError("reconcile needs a source (or --show/--confirm/--discard RUN, --list)");
  const path = `/sources/${seg(source)}/reconcile`;
  const started = expectShape(await api.call("POST", path, { dryRun: values["dry-run"] }), path, {
    runId: "string",
  });
  if (!values.wait) {
    show(io, values.json, started, () => `run ${started.runId} queued`);
    return 0;
  }
  const run = await waitSettled(
    api,
    `/reconcile-runs/${seg(String(started.runId))}`,
    RUN,
    io,
    timeoutMs(values),
  );
  show(io, values.json, run, () => runSummary(run));
  return run.state === "succeeded" ? 0 : 1;
}

interface DeadLetterLine {
  ref: Record<string, string>;
  code: string;
  reason: string;
  at: string;
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

async function deadLetters(api: Client, io: CliIo, values: Values, positionals: string[]): Promise<number> {
  const [action = "list", ...rest] = positionals;
  if (action === "list") {
    const page = await allDeadLetters(api, values.source);
    show(io, values.json, page, () =>
      [
        `${page.total} dead letter(s)`,
        ...page.items.map(
          (d) => `${d.ref.source}/${d.ref.kind}/${d.ref.id}  ${d.code}  ${d.reason}  ${d.at}`,
        ),
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
    "  reconciliation reports it as an orphan (the reconcile.orphans policy decides)",
  ].join("\n");
}

type AuditLine = {
  at: string;
  actor: string;
  role: string;
  action: string;
  target?: string;
  outcome: string;
  details?: Record<string, unknown>;
};

/** `audit`: the newest admin actions (who did what, when, and how it ended), newest first. */
async function audit(api: Client, io: CliIo, values: Values): Promise<number> {
  const query = values.limit === undefined ? "" : `?limit=${values.limit}`;
  const page = expectShape(await api.call("GET", `/audit${query}`), "/audit", PAGE);
  const items = page.items as AuditLine[];
  const total = typeof page.total === "number" ? page.total : items.length;
  show(io, values.json, page, () => {
    if (items.length === 0) return "no admin actions recorded";
    const more = total > items.length ? [`(the newest ${items.length} of ${total})`] : [];
    return [...items.map(auditLine), ...more].join("\n");
  });
  return 0;
}

function auditLine(entry: AuditLine): string {
  const details = Object.entries(entry.details ?? {}).map(([key, value]) => `${key}=${String(value)}`);
  return [
    entry.at,
    `${entry.actor} (${entry.role})`,
    entry.action,
    entry.target ?? "-",
    entry.outcome,
    ...(details.length > 0 ? [details.join(" ")] : []),
  ].join("  ");
}

/** --timeout-ms (checked by checkForm), 10 minutes by default. */
function timeoutMs(values: Values): number {
  return values["timeout-ms"] === undefined ? 600_000 : Number(values["timeout-ms"]);
}

export async function runAdminCommand(
  command: string,
  args: string[],
  io: CliIo = defaultIo(),
): Promise<number> {
  try {
    const { values, positionals, rest } = readArguments(command, args);
    const api = adminClient(values, io);
    switch (command) {
      case "status":
        return await status(api, io, values, rest);
      case "resync":
        return await resync(api, io, values, rest);
      case "reconcile":
        return await reconcile(api, io, values, rest);
      case "audit":
        return await audit(api, io, values);
      default:
        return await deadLetters(api, io, values, positionals);
    }
  } catch (err) {
    if (err instanceof UsageError) {
      io.stderr(`${err.message}\n${usageFor(command)}`);
      return 2;
    }
    if (err instanceof RequestError) {
      io.stderr(`${command}: ${err.message}\n`);
      return 1;
    }
    throw err;
  }
}
