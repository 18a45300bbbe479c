import { parse as parseYaml, stringify as toYaml } from "yaml";

type Tree = Record<string, unknown>;

const isMap = (v: unknown): v is Tree => v !== null && typeof v === "object" && !Array.isArray(v);

/** Helm's coalescing of user values over defaults: maps merge, anything else replaces, null deletes. */
export function deepMerge(base: unknown, override: unknown): Tree {
  if (!isMap(base) || !isMap(override)) return (isMap(override) ? override : base) as Tree;
  const out: Tree = { ...base };
  for (const [key, value] of Object.entries(override)) {
    if (value === null) delete out[key];
    else out[key] = isMap(value) && isMap(out[key]) ? deepMerge(out[key], value) : value;
  }
  return out;
}

/** Every `.Values.a.b` path a template names (without `$.Values` / `.Values` distinction). */
export function valuesReferences(text: string): string[][] {
  return [...text.matchAll(/\.Values((?:\.[A-Za-z_]\w*)+)/g)].map((m) => m[1]!.slice(1).split("."));
}

/** True when `path` names a key present in `values` (its value may be empty). */
export function definedAt(values: unknown, path: string[]): boolean {
  let cur: unknown = values;
  for (const key of path) {
    if (!isMap(cur) || !(key in cur)) return false;
    cur = cur[key];
  }
  return true;
}

/** Block openers minus `end`s in a Go template: 0 when balanced. */
export function blockBalance(text: string): number {
  const actions = [...text.matchAll(/\{\{-?\s*(\w+)/g)].map((m) => m[1]);
  const opens = actions.filter((a) => a === "if" || a === "range" || a === "with" || a === "define").length;
  const ends = actions.filter((a) => a === "end").length;
  return opens - ends;
}

/**
 * What templates/configmap.yaml renders into config.yaml (the `scim-bridge.configFile` helper),
 * parsed back: `.Values.config`, plus `admin.port` when the chart's admin.port is set and
 * `server.tls` (the files of the Secret mounted at `tlsDir`) when tls.existingSecret is set.
 */
export function renderConfigFile(values: Tree, tlsDir = "/etc/scim-bridge-tls"): unknown {
  const config = structuredClone((values.config ?? {}) as Tree);
  const admin = (values.admin ?? {}) as Tree;
  const tls = (values.tls ?? {}) as Tree;
  // sprig's `merge dst src`: keys already in dst (the chart's) win.
  if (truthy(admin.port)) config.admin = { ...((config.admin as Tree) ?? {}), port: admin.port };
  if (truthy(tls.existingSecret)) {
    const files = { cert: `${tlsDir}/tls.crt`, key: `${tlsDir}/tls.key` };
    config.server = { ...((config.server as Tree) ?? {}), tls: files };
  }
  return parseYaml(toYaml(config));
}

/** Go template truthiness: false, 0, nil and empty strings, lists and maps are false. */
export function truthy(value: unknown): boolean {
  if (value === undefined || value === null || value === false || value === 0 || value === "") return false;
  if (Array.isArray(value)) return value.length > 0;
  if (isMap(value)) return Object.keys(value).length > 0;
  return true;
}

function lookup(values: Tree, path: string): unknown {
  let cur: unknown = values;
  for (const key of path.split(".").slice(2)) cur = isMap(cur) ? cur[key] : undefined;
  return cur;
}

/** The conditions the chart's templates use around optional objects; anything else throws. */
function evaluate(expr: string, values: Tree): unknown {
  const e = expr.trim();
  const paren = /^\((.*)\)$/.exec(e);
  if (paren) return evaluate(paren[1]!, values);
  if (/^\.Values(\.\w+)+$/.test(e)) return lookup(values, e);
  const not = /^not (.+)$/.exec(e);
  if (not) return !truthy(evaluate(not[1]!, values));
  const eqInt = /^eq \(int ([^()]+)\) \(int ([^()]+)\)$/.exec(e);
  if (eqInt) return Number(evaluate(eqInt[1]!, values)) === Number(evaluate(eqInt[2]!, values));
  throw new Error(`the mini-renderer cannot evaluate {{ if ${e} }}`);
}

/**
 * A mini-renderer for one template: evaluates its `if`/`else` blocks against `values` and drops
 * the branches not taken; every other action (`include`, `toYaml`, `with`, `range`) is left as
 * written. Enough to see which objects and list items a set of values produces.
 */
export function renderIfs(text: string, values: Tree): string {
  type Frame = { isIf: boolean; parentOn: boolean; cond: boolean };
  const stack: Frame[] = [];
  let on = true;
  let out = "";
  let last = 0;
  for (const m of text.matchAll(/\{\{-?\s*(if|else|end|with|range|define)\b(.*?)\s*-?\}\}/g)) {
    if (on) out += text.slice(last, m.index);
    last = m.index + m[0].length;
    const [whole, word, rest] = m;
    if (word === "if") {
      const cond = truthy(evaluate(rest!, values));
      stack.push({ isIf: true, parentOn: on, cond });
      on = on && cond;
    } else if (word === "else") {
      const frame = stack.at(-1);
      if (!frame?.isIf || rest!.trim() !== "") throw new Error(`unsupported else: ${whole}`);
      on = frame.parentOn && !frame.cond;
    } else if (word === "end") {
      const frame = stack.pop();
      if (!frame) throw new Error("an end without a block");
      if (!frame.isIf && on) out += whole;
      on = frame.parentOn;
    } else {
      if (on) out += whole;
      stack.push({ isIf: false, parentOn: on, cond: true });
    }
  }
  if (stack.length > 0) throw new Error("unclosed blocks");
  return out + text.slice(last);
}

/** The YAML documents of a rendered template. */
export function documents(rendered: string): string[] {
  return rendered.split(/^---$/m).filter((d) => /^kind: /m.test(d));
}

/** Seconds a role's terminationGracePeriodSeconds must cover (the `terminationGracePeriod` helper). */
export function gracePeriodNeeded(values: Tree, role: "api" | "worker"): number {
  const server = ((values.config as Tree)?.server ?? {}) as Tree;
  const stopMs = Number(server.drainDelayMs ?? 0) + Number(server.shutdownTimeoutMs ?? 10_000);
  const preStop = role === "api" ? Number((values.api as Tree).preStopSleepSeconds ?? 0) : 0;
  return preStop + Math.floor((stopMs + 999) / 1000) + 5;
}
