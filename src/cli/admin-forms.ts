import type { parseArgs } from "node:util";

/**
 * The admin commands' options and forms: the one table the argument parser (admin-arguments.ts)
 * and the usage text read.
 */
export const OPTIONS = {
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
  "user-name": { type: "string" },
  "group-name": { type: "string" },
  limit: { type: "string" },
} as const;

export type Values = ReturnType<
  typeof parseArgs<{ options: typeof OPTIONS; allowPositionals: true }>
>["values"];
export type OptionName = keyof typeof OPTIONS;

/** Options every admin command takes. */
export const COMMON: readonly OptionName[] = ["url", "token", "json"];

/** One way of calling a command: what it takes beyond the common options. */
export interface Form {
  /** Its line in the usage text (after `scim-bridge `). */
  usage: string;
  /** What the usage text says of it. */
  note?: string;
  /** The options it takes besides --url, --token and --json. */
  options: readonly OptionName[];
  /** How many positional arguments it takes (after the dead-letters action). */
  positionals: readonly [min: number, max: number];
}

const HELD = (command: "resync" | "reconcile", id: string): Record<string, Form> => ({
  show: { usage: `${command} --show ${id}`, options: ["show"], positionals: [0, 0] },
  confirm: {
    usage: `${command} --confirm ${id}`,
    note: "apply what the guard holds",
    options: ["confirm"],
    positionals: [0, 0],
  },
  discard: {
    usage: `${command} --discard ${id}`,
    note: "drop it",
    options: ["discard"],
    positionals: [0, 0],
  },
  list: { usage: `${command} --list [--source S]`, options: ["list", "source"], positionals: [0, 0] },
});

/** Admin actions `audit` shows by default, and at most (the admin API's page sizes). */
const AUDIT_PAGE = 50;
export const AUDIT_MAX = 500;

/**
 * Every admin command's forms: the one table both the parser and the usage text read. An option or
 * a positional argument a form does not take is a usage error (exit 2) before any request: an
 * operator's typo must never do more than asked (`resync SOURCE --dry-run` is no dry run).
 */
export const COMMANDS: Record<string, Record<string, Form>> = {
  status: {
    all: { usage: "status", note: "exit 0 when idle, 1 when not", options: [], positionals: [0, 0] },
    entity: {
      usage: "status SOURCE/user/ID | SOURCE/group/ID",
      note: "one entity's sync status; exit 0 when synced, 1 when not",
      options: [],
      positionals: [1, 1],
    },
    lookup: {
      usage: "status SOURCE --user-name NAME | --group-name NAME",
      note: "the same, found by userName or displayName",
      options: ["user-name", "group-name"],
      positionals: [1, 1],
    },
  },
  resync: {
    start: {
      usage: "resync SOURCE [--user ID]... [--group ID]... [--wait [--timeout-ms N]]",
      note: "with --wait: exit 1 unless it succeeded",
      options: ["user", "group", "wait", "timeout-ms"],
      positionals: [1, 1],
    },
    ...HELD("resync", "OP"),
  },
  reconcile: {
    start: {
      usage: "reconcile SOURCE [--dry-run] [--wait [--timeout-ms N]]",
      note: "with --wait: exit 1 when it failed or waits for confirmation",
      options: ["dry-run", "wait", "timeout-ms"],
      positionals: [1, 1],
    },
    ...HELD("reconcile", "RUN"),
  },
  "dead-letters": {
    list: { usage: "dead-letters [list] [--source S]", options: ["source"], positionals: [0, 0] },
    retry: {
      usage: "dead-letters retry [SOURCE/KIND/ID]...",
      note: "all when none is named; exit 1 when a named one is no dead letter",
      options: [],
      positionals: [0, Number.POSITIVE_INFINITY],
    },
    discard: { usage: "dead-letters discard SOURCE/KIND/ID", options: [], positionals: [1, 1] },
  },
  audit: {
    list: {
      usage: "audit [--limit N]",
      note: `the newest admin actions (${AUDIT_PAGE} unless --limit, at most ${AUDIT_MAX})`,
      options: ["limit"],
      positionals: [0, 0],
    },
  },
};

/** An option that only means something next to another. */
export const REQUIRES: Partial<Record<OptionName, OptionName>> = { "timeout-ms": "wait" };

const COMMON_USAGE =
  "options of every admin command: --url URL, --token T (or SCIM_BRIDGE_ADMIN_TOKEN), --json";

function formLine(form: Form): string {
  const usage = `  ${form.usage}`;
  if (!form.note) return usage;
  return usage.length < 44 ? `${usage.padEnd(44)}${form.note}` : `${usage}\n${" ".repeat(44)}${form.note}`;
}

function commandUsage(command: string): string {
  const forms = Object.values(COMMANDS[command] ?? {});
  return `usage:\n${forms.map((f) => formLine({ ...f, usage: `scim-bridge ${f.usage}` })).join("\n")}\n${COMMON_USAGE}\n`;
}

export const ADMIN_USAGE = `admin commands (talk to the admin API; exit 0 ok, 1 failure, 2 usage):
${Object.values(COMMANDS)
  .flatMap((forms) => Object.values(forms).map(formLine))
  .join("\n")}
${COMMON_USAGE}
`;

/** The usage text a usage error of the command prints: its own forms, or every admin command's. */
export function usageFor(command: string): string {
  return COMMANDS[command] ? commandUsage(command) : ADMIN_USAGE;
}
