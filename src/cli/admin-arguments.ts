import { parseArgs } from "node:util";
import { UsageError } from "./admin-errors.js";
import {
  AUDIT_MAX,
  COMMANDS,
  COMMON,
  type Form,
  OPTIONS,
  type OptionName,
  REQUIRES,
  type Values,
} from "./admin-forms.js";

function parse(command: string, args: string[]) {
  try {
    return parseArgs({ args, options: OPTIONS, allowPositionals: true, strict: true, tokens: true });
  } catch (err) {
    throw new UsageError(`${command}: ${(err as Error).message}`);
  }
}

/** Which form of the command the arguments ask for; throws a UsageError for none. */
function pickForm(command: string, values: Values, positionals: string[]): { form: Form; rest: string[] } {
  const forms = COMMANDS[command];
  if (!forms) throw new UsageError(`unknown admin command ${command}`);
  if (command === "status") {
    const byName = values["user-name"] !== undefined || values["group-name"] !== undefined;
    if (values["user-name"] !== undefined && values["group-name"] !== undefined)
      throw new UsageError("status: --user-name and --group-name cannot be combined");
    const form = byName ? forms.lookup : positionals.length === 0 ? forms.all : forms.entity;
    return { form: form as Form, rest: positionals };
  }
  const only = Object.values(forms);
  if (only.length === 1) return { form: only[0] as Form, rest: positionals };
  if (command === "dead-letters") {
    const [action = "list", ...rest] = positionals;
    const form = Object.hasOwn(forms, action) ? forms[action] : undefined;
    if (!form) throw new UsageError(`dead-letters: unknown action ${action}`);
    return { form, rest };
  }
  // resync, reconcile: --show, --confirm, --discard and --list each select a form; none starts one.
  const selectors = (["show", "confirm", "discard", "list"] as const).filter(
    (name) => values[name] !== undefined && values[name] !== false,
  );
  if (selectors.length > 1)
    throw new UsageError(`${command}: --${selectors[0]} and --${selectors[1]} cannot be combined`);
  return { form: forms[selectors[0] ?? "start"] as Form, rest: positionals };
}

/** Checks the arguments against the form: its options only, its number of positionals, no empty value. */
function checkForm(
  command: string,
  form: Form,
  tokens: NonNullable<ReturnType<typeof parseArgs>["tokens"]>,
  values: Values,
  rest: string[],
): void {
  const given = new Set<string>();
  for (const token of tokens) {
    if (token.kind !== "option") continue;
    const name = token.name as OptionName;
    if (!COMMON.includes(name) && !form.options.includes(name))
      throw new UsageError(`${command}: ${token.rawName} does not apply to \`scim-bridge ${form.usage}\``);
    if (token.value === "") throw new UsageError(`${command}: ${token.rawName} needs a value`);
    given.add(name);
  }
  for (const name of given) {
    const needed = REQUIRES[name as OptionName];
    if (needed && !given.has(needed))
      throw new UsageError(`${command}: --${name} only applies with --${needed}`);
  }
  const timeout = values["timeout-ms"];
  if (timeout !== undefined && !(/^[1-9][0-9]*$/.test(timeout) && Number.isSafeInteger(Number(timeout))))
    throw new UsageError(
      `${command}: --timeout-ms takes a positive whole number of milliseconds, not ${timeout}`,
    );
  const limit = values.limit;
  if (limit !== undefined && !(/^[1-9][0-9]{0,2}$/.test(limit) && Number(limit) <= AUDIT_MAX))
    throw new UsageError(`${command}: --limit takes a whole number from 1 to ${AUDIT_MAX}, not ${limit}`);
  const [min, max] = form.positionals;
  if (rest.length > max)
    throw new UsageError(
      `${command}: unexpected argument${rest.length - max > 1 ? "s" : ""} ${rest.slice(max).join(" ")} for \`scim-bridge ${form.usage}\``,
    );
  if (rest.length < min)
    throw new UsageError(`${command}: \`scim-bridge ${form.usage}\` needs more arguments`);
  if (rest.some((arg) => arg === "")) throw new UsageError(`${command}: an argument is empty`);
}

/**
 * An admin command's arguments, checked against the form they ask for: its options, `positionals`
 * as given, `rest` after a dead-letters action. A usage error (UsageError) before any request.
 */
export function readArguments(
  command: string,
  args: string[],
): { values: Values; positionals: string[]; rest: string[] } {
  const { values, positionals, tokens } = parse(command, args);
  const { form, rest } = pickForm(command, values, positionals);
  checkForm(command, form, tokens, values, rest);
  return { values, positionals, rest };
}

/** A SOURCE/user/ID or SOURCE/group/ID reference, or a usage error. */
export function parseRef(text: string): { source: string; kind: string; id: string } {
  const [source, kind, ...rest] = text.split("/");
  if (!source || (kind !== "user" && kind !== "group") || rest.length === 0 || rest.join("/") === "") {
    throw new UsageError(`a reference is SOURCE/user/ID or SOURCE/group/ID, not ${text}`);
  }
  return { source, kind, id: rest.join("/") };
}
