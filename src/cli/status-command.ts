import { parseRef } from "./admin-arguments.js";
import { type CliIo, type Client, expectShape, seg } from "./admin-client.js";
import { RequestError } from "./admin-errors.js";
import type { Values } from "./admin-forms.js";
import { isPast, show } from "./admin-format.js";
import { deadLetterAdvice } from "./dead-letter-advice.js";

/**
 * `status`: is the bridge idle (exit 0) or not (1); with SOURCE/KIND/ID, or a userName or
 * displayName in a source, one entity's sync status (exit 0 when synced).
 */
export async function statusCommand(
  api: Client,
  io: CliIo,
  values: Values,
  positionals: string[],
): Promise<number> {
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
    // Why jobs wait and none runs: the platform asked for a pause (one line per paused queue).
    const pausedLines = ((body.pausedQueues ?? []) as Array<{ queue?: string; until?: string }>)
      .map(
        (p) =>
          `\npaused: the ${p.queue} queue waits for the platform until ${p.until} (it asked: Retry-After)`,
      )
      .join("");
    return `idle: ${body.idle}\npending: ${body.pending}${lateLine}${pausedLines}\ndead letters: ${body.deadLetters}\nawaiting confirmation:${held ? `\n${held}` : " none"}\nsources:\n${sources}\nqueues:\n${queues}`;
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
    // A dead letter still standing: what its code asks of the operator (none once discarded).
    const advice =
      body.state === "dead" && error?.discardedAt === undefined ? deadLetterAdvice(error?.code) : undefined;
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
      ...(advice === undefined ? [] : [`  what to do:   ${advice}`]),
      ...(body.state === "dead" ? again : []),
    ].join("\n");
  });
  return body.state === "synced" ? 0 : 1;
}
