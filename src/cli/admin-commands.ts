import { parseArgs } from "node:util";

/**
 * The CLI's admin commands: `status`, `resync`, `reconcile`, `dead-letters`. They talk to the admin
 * API over HTTP. Exit codes: 0 ok, 1 failure (or not idle / needs attention where that is the
 * question), 2 usage.
 */
export const ADMIN_USAGE = `admin commands (talk to the admin API; --url, --token or SCIM_BRIDGE_ADMIN_TOKEN, --json):
  status                                  exit 0 when idle, 1 when not
  status SOURCE/user/ID | SOURCE/group/ID one entity's sync status; exit 0 when synced, 1 when not
  resync <source> [--user ID]... [--group ID]... [--wait]
  resync --show OP | --confirm OP | --discard OP | --list [--source S]
  reconcile <source> [--dry-run] [--wait] exit 1 when the run failed or waits for confirmation
  reconcile --show RUN | --confirm RUN | --discard RUN | --list [--source S]
  dead-letters [list [--source S] | retry [SOURCE/KIND/ID]... | discard SOURCE/KIND/ID]
                                          retry exits 1 when a named one is no dead letter
`;

export interface CliIo {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  env: Record<string, string | undefined>;
  fetch: typeof fetch;
  /** Poll interval for --wait (ms). */
  pollMs?: number;
}

const defaultIo = (): CliIo => ({
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
  env: process.env,
  fetch: globalThis.fetch,
});

class UsageError extends Error {}
class RequestError extends Error {}

const OPTIONS = {
  url: { type: "string" },
  token: { type: "string" },
  json: { type: "boolean", default: false },
  user: { type: "string", multiple: true },
  group: { type: "string", multiple: true },
  "dry-run": { type: "boolean", default: false },
  wait: { type: "boolean", default: false },
  source: { type: "string" },
  show: { type: "string" },
  confirm: { type: "string" },
  discard: { type: "string" },
  list: { type: "boolean", default: false },
  "timeout-ms": { type: "string" },
} as const;

type Values = ReturnType<typeof parseArgs<{ options: typeof OPTIONS; allowPositionals: true }>>["values"];

interface Client {
  call(method: string, path: string, body?: unknown): Promise<Record<string, unknown>>;
}

function client(values: Values, io: CliIo): Client {
  const url = (values.url ?? `http://127.0.0.1:${io.env.PORT ?? "8080"}`).replace(/\/$/, "");
  const token = values.token ?? io.env.SCIM_BRIDGE_ADMIN_TOKEN;
  if (!token) throw new UsageError("an admin token is needed: --token or SCIM_BRIDGE_ADMIN_TOKEN");
  return {
    async call(method, path, body) {
      let res: Response;
      try {
        res = await io.fetch(`${url}/admin/v1${path}`, {
          method,
          headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json" },
          body: body === undefined ? undefined : JSON.stringify(body),
        });
      } catch (err) {
        throw new RequestError(`cannot reach ${url}: ${(err as Error).message}`);
      }
      const text = await res.text();
      let parsed: Record<string, unknown> = {};
      try {
        parsed = text ? (JSON.parse(text) as Record<string, unknown>) : {};
      } catch {
        parsed = { raw: text };
      }
      if (!res.ok) {
        const error = parsed.error as { code?: string; message?: string } | undefined;
        throw new RequestError(`${res.status} ${error?.code ?? ""}: ${error?.message ?? text}`.trim());
      }
      return parsed;
    },
  };
}

const SETTLED = ["succeeded", "failed", "awaiting-confirmation", "discarded"];

async function waitSettled(
  api: Client,
  path: string,
  io: CliIo,
  timeoutMs: number,
): Promise<Record<string, unknown>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const current = await api.call("GET", path);
    if (SETTLED.includes(String(current.state))) return current;
    if (Date.now() > deadline) throw new RequestError(`timed out waiting for ${path}`);
    await new Promise((resolve) => setTimeout(resolve, io.pollMs ?? 500));
  }
}

function show(io: CliIo, json: boolean, data: unknown, human: () => string): void {
  io.stdout(json ? `${JSON.stringify(data, null, 2)}\n` : `${human()}\n`);
}

function runSummary(run: Record<string, unknown>): string {
  const counts = (run.counts ?? {}) as Record<string, number>;
  const guard = run.guard as
    | { plannedDeprovisions: number; ownedUsers: number; tripped: boolean }
    | undefined;
  const lines = [
    `run ${run.runId} (${run.source}): ${run.state}${run.dryRun ? " [dry run]" : ""}`,
    ...Object.entries(counts).map(([cls, n]) => `  ${cls.padEnd(16)} ${n}`),
  ];
  if (guard)
    lines.push(
      `  guard: ${guard.plannedDeprovisions} of ${guard.ownedUsers} owned users${guard.tripped ? " (tripped)" : ""}`,
    );
  if (run.error) lines.push(`  error: ${run.error}`);
  if (run.state === "awaiting-confirmation")
    lines.push(
      `  held by the deprovisioning guard: scim-bridge reconcile --confirm ${run.runId} (apply) or --discard ${run.runId} (drop)`,
    );
  return lines.join("\n");
}

function resyncSummary(op: Record<string, unknown>): string {
  // Ids the source does not have are listed by the run as `<kind>/<id>`; an operator must see them.
  const unknown = Array.isArray(op.unknown) ? (op.unknown as string[]) : [];
  const guard = op.guard as { plannedDeprovisions: number; ownedUsers: number; tripped: boolean } | undefined;
  const lines = [
    `resync ${op.id} (${op.source}): ${op.state}${op.enqueued !== undefined ? `, ${op.enqueued} of ${op.total} enqueued` : ""}`,
  ];
  if (unknown.length > 0) lines.push(`  unknown: ${unknown.join(" ")}`);
  if (guard)
    lines.push(
      `  guard: ${guard.plannedDeprovisions} of ${guard.ownedUsers} owned users${guard.tripped ? " (tripped)" : ""}`,
    );
  if (op.state === "awaiting-confirmation")
    lines.push(
      `  held by the deprovisioning guard: scim-bridge resync --confirm ${op.id} (apply) or --discard ${op.id} (drop)`,
    );
  return lines.join("\n");
}

function parseRef(text: string): { source: string; kind: string; id: string } {
  const [source, kind, ...rest] = text.split("/");
  if (!source || (kind !== "user" && kind !== "group") || rest.length === 0) {
    throw new UsageError(`a reference is SOURCE/user/ID or SOURCE/group/ID, not ${text}`);
  }
  return { source, kind, id: rest.join("/") };
}

async function status(api: Client, io: CliIo, json: boolean, positionals: string[]): Promise<number> {
  if (positionals.length > 1) throw new UsageError("status takes at most one SOURCE/KIND/ID");
  if (positionals[0] !== undefined) return entityStatus(api, io, json, parseRef(positionals[0]));
  const body = await api.call("GET", "/status");
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
    return `idle: ${body.idle}\npending: ${body.pending}\ndead letters: ${body.deadLetters}\nsources:\n${sources}\nqueues:\n${queues}`;
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
  const body = await api.call(
    "GET",
    `/sources/${encodeURIComponent(ref.source)}/${ref.kind}s/${encodeURIComponent(ref.id)}`,
  );
  show(io, json, body, () => {
    const applied = body.lastApplied as { generation: number; at: string | null } | null;
    const error = body.lastError as { code?: string; message?: string; at?: string } | null;
    return [
      `${ref.source}/${ref.kind}/${ref.id}: ${body.state}${body.deletedAtSource ? " (deleted at the source)" : ""}`,
      `  platform id:  ${body.platformId ?? "none yet"}`,
      `  generation:   ${body.generation ?? "-"}, last applied: ${applied ? `${applied.generation} at ${applied.at}` : "never"}`,
      ...(error ? [`  last error:   ${error.code ?? ""} ${error.message ?? ""} (${error.at ?? "?"})`] : []),
      ...(body.state === "dead"
        ? [`  retry with:   scim-bridge dead-letters retry ${ref.source}/${ref.kind}/${ref.id}`]
        : []),
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
    summary(op: Record<string, unknown>): string;
    /** What a confirm or discard prints. */
    settled(op: Record<string, unknown>): string;
    /** One line of the list. */
    line(op: Record<string, unknown>): string;
  },
): Promise<number | undefined> {
  const settle = values.confirm ? "confirm" : values.discard ? "discard" : undefined;
  if (settle) {
    const op = await api.call("POST", `${kind.path}/${values.confirm ?? values.discard}/${settle}`);
    show(io, values.json, op, () => kind.settled(op));
    return 0;
  }
  if (values.show) {
    const op = await api.call("GET", `${kind.path}/${values.show}`);
    show(io, values.json, op, () => kind.summary(op));
    return 0;
  }
  if (values.list) {
    const query = values.source ? `?source=${encodeURIComponent(values.source)}` : "";
    const page = await api.call("GET", `${kind.path}${query}`);
    const items = (page.items ?? []) as Array<Record<string, unknown>>;
    show(io, values.json, page, () => items.map(kind.line).join("\n"));
    return 0;
  }
  return undefined;
}

async function resync(api: Client, io: CliIo, values: Values, positionals: string[]): Promise<number> {
  const handled = await heldOperation(api, io, values, {
    path: "/resyncs",
    summary: resyncSummary,
    settled: resyncSummary,
    line: (op) => `${op.id}  ${op.source}  ${op.state}  ${op.createdAt}`,
  });
  if (handled !== undefined) return handled;
  const source = positionals[0];
  if (!source) throw new UsageError("resync needs a source (or --show/--confirm/--discard OP, --list)");
  const body = values.user || values.group ? { users: values.user ?? [], groups: values.group ?? [] } : {};
  let op = await api.call("POST", `/sources/${encodeURIComponent(source)}/resync`, body);
  if (values.wait)
    op = await waitSettled(api, `/resyncs/${op.id}`, io, Number(values["timeout-ms"] ?? 600_000));
  const unknown = Array.isArray(op.unknown) ? (op.unknown as string[]) : [];
  show(io, values.json, op, () => resyncSummary({ source, ...op }));
  return !values.wait || (op.state === "succeeded" && unknown.length === 0) ? 0 : 1;
}

async function reconcile(api: Client, io: CliIo, values: Values, positionals: string[]): Promise<number> {
  const handled = await heldOperation(api, io, values, {
    path: "/reconcile-runs",
    summary: runSummary,
    settled: (run) => `run ${run.runId}: ${run.state}`,
    line: (r) => `${r.runId}  ${r.source}  ${r.state}${r.dryRun ? " [dry run]" : ""}  ${r.createdAt}`,
  });
  if (handled !== undefined) return handled;
  const source = positionals[0];
  if (!source) throw new UsageError("reconcile needs a source (or --show/--confirm/--discard RUN, --list)");
  const started = await api.call("POST", `/sources/${encodeURIComponent(source)}/reconcile`, {
    dryRun: values["dry-run"],
  });
  if (!values.wait) {
    show(io, values.json, started, () => `run ${started.runId} queued`);
    return 0;
  }
  const run = await waitSettled(
    api,
    `/reconcile-runs/${started.runId}`,
    io,
    Number(values["timeout-ms"] ?? 600_000),
  );
  show(io, values.json, run, () => runSummary(run));
  return run.state === "succeeded" ? 0 : 1;
}

async function deadLetters(api: Client, io: CliIo, values: Values, positionals: string[]): Promise<number> {
  const [action = "list", ...rest] = positionals;
  if (action === "list") {
    const query = values.source ? `?source=${encodeURIComponent(values.source)}&limit=500` : "?limit=500";
    const page = await api.call("GET", `/dead-letters${query}`);
    const items = (page.items ?? []) as Array<{
      ref: Record<string, string>;
      code: string;
      reason: string;
      at: string;
    }>;
    show(io, values.json, page, () =>
      [
        `${page.total} dead letter(s)`,
        ...items.map((d) => `${d.ref.source}/${d.ref.kind}/${d.ref.id}  ${d.code}  ${d.reason}  ${d.at}`),
      ].join("\n"),
    );
    return 0;
  }
  if (action === "retry") {
    const body = rest.length > 0 ? { refs: rest.map(parseRef) } : {};
    const result = await api.call("POST", "/dead-letters/retry", body);
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
    if (rest.length !== 1) throw new UsageError("dead-letters discard needs one SOURCE/KIND/ID");
    const ref = parseRef(rest[0] as string);
    const result = await api.call(
      "DELETE",
      `/dead-letters/${ref.source}/${ref.kind}/${encodeURIComponent(ref.id)}`,
    );
    show(io, values.json, result, () => `discarded ${rest[0]}`);
    return 0;
  }
  throw new UsageError(`dead-letters: unknown action ${action}`);
}

export async function runAdminCommand(
  command: string,
  args: string[],
  io: CliIo = defaultIo(),
): Promise<number> {
  let values: Values;
  let positionals: string[];
  try {
    ({ values, positionals } = parseArgs({ args, options: OPTIONS, allowPositionals: true, strict: true }));
  } catch (err) {
    io.stderr(`${(err as Error).message}\n${ADMIN_USAGE}`);
    return 2;
  }
  try {
    const api = client(values, io);
    switch (command) {
      case "status":
        return await status(api, io, values.json, positionals);
      case "resync":
        return await resync(api, io, values, positionals);
      case "reconcile":
        return await reconcile(api, io, values, positionals);
      case "dead-letters":
        return await deadLetters(api, io, values, positionals);
      default:
        throw new UsageError(`unknown admin command ${command}`);
    }
  } catch (err) {
    if (err instanceof UsageError) {
      io.stderr(`${err.message}\n${ADMIN_USAGE}`);
      return 2;
    }
    if (err instanceof RequestError) {
      io.stderr(`${command}: ${err.message}\n`);
      return 1;
    }
    throw err;
  }
}
