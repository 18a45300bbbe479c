import { type CliIo, type Client, expectShape, PAGE } from "./admin-client.js";
import type { Values } from "./admin-forms.js";
import { show } from "./admin-format.js";

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
export async function auditCommand(api: Client, io: CliIo, values: Values): Promise<number> {
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
