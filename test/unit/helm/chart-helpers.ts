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

/** What templates/configmap.yaml renders into config.yaml (`toYaml .Values.config`), parsed back. */
export function renderConfigFile(values: Tree): unknown {
  return parseYaml(toYaml(values.config));
}
