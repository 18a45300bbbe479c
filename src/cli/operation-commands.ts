import { type CliIo, type Client, expectShape, PAGE, RESYNC, RUN, type Shape, seg } from "./admin-client.js";
import { RequestError, UsageError } from "./admin-errors.js";
import type { Values } from "./admin-forms.js";
import { type Outcome, resyncSummary, runSummary, show } from "./admin-format.js";

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

/**
 * `resync`: sync a source (or the named users and groups) again; with --wait, exit 1 unless it
 * succeeded.
 */
export async function resyncCommand(
  api: Client,
  io: CliIo,
  values: Values,
  positionals: string[],
): Promise<number> {
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

/**
 * `reconcile`: compare a source with the platform and repair the drift (unless --dry-run); with
 * --wait, exit 1 unless it succeeded.
 */
export async function reconcileCommand(
  api: Client,
  io: CliIo,
  values: Values,
  positionals: string[],
): Promise<number> {
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

const SETTLED = ["succeeded", "failed", "awaiting-confirmation", "discarded"];

/**
 * Asks for the operation at `path` until it settles; at the deadline, a RequestError saying what is
 * left. No answer, or a 502/503/504, is asked again.
 */
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

/** --timeout-ms (checked by checkForm), 10 minutes by default. */
function timeoutMs(values: Values): number {
  return values["timeout-ms"] === undefined ? 600_000 : Number(values["timeout-ms"]);
}
