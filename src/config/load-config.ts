import { readFileSync } from "node:fs";
import { CronExpressionParser } from "cron-parser";
import { parse as parseYaml } from "yaml";
import { MIN_KEY_BYTES, webhookKey } from "../hooks/standard-webhooks.js";
import { parseScimPath } from "../mapping/scim-path.js";
import { type Config, configSchema } from "./config-schema.js";

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join("\n")}`);
    this.name = "ConfigError";
  }
}

/** The environment variables that override the file (ARCHITECTURE.md, "Outside interface"). */
export interface ConfigEnv {
  SCIM_BRIDGE_CONFIG?: string;
  REDIS_URL?: string;
  PLATFORM_BASE_URL?: string;
  PLATFORM_TOKEN?: string;
  PORT?: string;
  LOG_LEVEL?: string;
  [name: string]: string | undefined;
}

/** Replaces `${VAR}` (and `${VAR:-default}`) in every string of a parsed YAML tree. */
export function interpolate(value: unknown, env: ConfigEnv, problems: string[], path = ""): unknown {
  if (typeof value === "string") {
    return value.replace(
      /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g,
      (_m, name: string, fallback?: string) => {
        const v = env[name];
        if (v !== undefined && v !== "") return v;
        if (fallback !== undefined) return fallback;
        problems.push(`${path || "(root)"}: environment variable ${name} is not set`);
        return "";
      },
    );
  }
  if (Array.isArray(value)) return value.map((v, i) => interpolate(v, env, problems, `${path}[${i}]`));
  if (value !== null && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value))
      out[k] = interpolate(v, env, problems, path ? `${path}.${k}` : k);
    return out;
  }
  return value;
}

function setPath(obj: Record<string, unknown>, path: string[], value: unknown): void {
  let cur: Record<string, unknown> = obj;
  for (const key of path.slice(0, -1)) {
    const next = cur[key];
    if (next === null || typeof next !== "object" || Array.isArray(next)) cur[key] = {};
    cur = cur[key] as Record<string, unknown>;
  }
  cur[path[path.length - 1]!] = value;
}

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === "object" && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}

export interface BuildConfigOptions {
  /**
   * Refuse a signed-events secret whose key decodes to fewer than MIN_KEY_BYTES, naming the key
   * (default false). loadConfigFile sets it, so `start` and `config check` tell the operator; a
   * config built in code (a test harness probing /hooks/<source>/events' own refusal, 500
   * webhook_secret_too_short, which stays as the second line) is left to that runtime check.
   */
  refuseShortSigningKeys?: boolean;
}

/** Validates a raw (already parsed) config tree and applies the environment overrides. */
export function buildConfig(raw: unknown, env: ConfigEnv = {}, options: BuildConfigOptions = {}): Config {
  const problems: string[] = [];
  const tree = (interpolate(raw ?? {}, env, problems) ?? {}) as Record<string, unknown>;
  if (typeof tree !== "object" || Array.isArray(tree)) throw new ConfigError(["(root): must be a mapping"]);
  for (const [variable, path] of Object.entries(ENV_OVERRIDES)) {
    const value = env[variable];
    if (!value) continue;
    if (variable !== "PORT") setPath(tree, path.split("."), value);
    else if (Number.isInteger(Number(value))) setPath(tree, path.split("."), Number(value));
    else problems.push(`PORT: "${value}" is not a port number`);
  }

  // A value whose variable is not set has that one problem named, not also the empty string's.
  const UNSET = ": environment variable ";
  const unset = new Set(problems.filter((p) => p.includes(UNSET)).map((p) => p.slice(0, p.indexOf(UNSET))));
  const later: string[] = [];
  const parsed = configSchema.safeParse(tree);
  if (!parsed.success) {
    for (const issue of parsed.error.issues) {
      const where = issue.path.length ? issue.path.join(".") : "(root)";
      later.push(`${where}: ${issue.message}`);
    }
  }
  later.push(...valueProblems(tree, options));
  if (parsed.success) later.push(...semanticProblems(parsed.data));
  for (const problem of later) {
    const where = problem.slice(0, problem.indexOf(": "));
    if (unset.has(where)) continue;
    // A value an environment variable gave: name the variable, so that the file is not searched in vain.
    const variable = Object.entries(ENV_OVERRIDES).find(([, path]) => path === where)?.[0];
    problems.push(variable && env[variable] ? `${problem} (set by ${variable})` : problem);
  }
  if (problems.length > 0 || !parsed.success) throw new ConfigError(problems);
  return deepFreeze(parsed.data);
}

/**
 * The environment variables that override a key of the file, and that key: buildConfig applies
 * them, and names the variable in a problem with the value it gave.
 */
const ENV_OVERRIDES: Record<string, string> = {
  REDIS_URL: "redis.url",
  PLATFORM_BASE_URL: "platform.baseUrl",
  PLATFORM_TOKEN: "platform.token",
  PORT: "server.port",
  LOG_LEVEL: "logLevel",
};

const field = (value: unknown, key: string): unknown =>
  value !== null && typeof value === "object" && !Array.isArray(value)
    ? (value as Record<string, unknown>)[key]
    : undefined;
const entries = (value: unknown): Array<[string, unknown]> =>
  value !== null && typeof value === "object" && !Array.isArray(value) ? Object.entries(value) : [];

/**
 * Checks of single values that a schema cannot express. They read the raw tree (defensively), so
 * they run even when the schema refused something else: one run names every problem.
 */
function valueProblems(tree: Record<string, unknown>, options: BuildConfigOptions): string[] {
  const problems: string[] = [];
  const platform = field(tree, "platform");
  const baseUrl = field(platform, "baseUrl");
  if (typeof baseUrl === "string" && URL.canParse(baseUrl)) {
    const { protocol } = new URL(baseUrl);
    if (protocol === "http:" && field(platform, "allowInsecureHttp") !== true) {
      problems.push(
        "platform.baseUrl: http:// is refused; use https:// or set platform.allowInsecureHttp: true for a local emulator",
      );
    } else if (protocol !== "http:" && protocol !== "https:") {
      problems.push(`platform.baseUrl: unsupported protocol ${protocol}`);
    }
  }
  const schedule = field(field(tree, "reconcile"), "schedule");
  if (typeof schedule === "string") {
    try {
      CronExpressionParser.parse(schedule);
    } catch (err) {
      problems.push(`reconcile.schedule: not a cron expression: ${(err as Error).message}`);
    }
  }
  for (const [id, source] of entries(field(tree, "sources"))) {
    for (const [name, rule] of entries(field(source, "attributes"))) {
      const from = field(rule, "from");
      if (typeof from !== "string") continue;
      const where = `sources.${id}.attributes.${name}.from`;
      if (/^\s|\s$/.test(from)) problems.push(`${where}: leading or trailing space`);
      try {
        parseScimPath(from.trim());
      } catch (err) {
        problems.push(`${where}: not a SCIM attribute path: ${(err as Error).message}`);
      }
    }
    const events = field(field(field(source, "hooks"), "events"), "secret");
    if (typeof events === "string" && !/^whsec_[A-Za-z0-9+/]+={0,2}$/.test(events)) {
      problems.push(
        `sources.${id}.hooks.events.secret: must be whsec_ followed by base64 (the Standard Webhooks form)`,
      );
    } else if (options.refuseShortSigningKeys && typeof events === "string") {
      // The floor /hooks/<source>/events enforces (500 webhook_secret_too_short), told at start.
      const keyBytes = webhookKey(events).length;
      if (keyBytes < MIN_KEY_BYTES) {
        problems.push(
          `sources.${id}.hooks.events.secret: decodes to ${keyBytes} bytes, fewer than ${MIN_KEY_BYTES} (a key that short is forgeable)`,
        );
      }
    }
  }
  return problems;
}

/** Checks that a schema cannot express. */
function semanticProblems(config: Config): string[] {
  const problems: string[] = [];
  const owner = new Map<string, string>();
  for (const [id, source] of Object.entries(config.sources)) {
    for (const token of source.tokens) {
      const other = owner.get(token);
      if (other)
        problems.push(
          `sources.${id}.tokens: a token is shared with source ${other} (a token belongs to exactly one source)`,
        );
      owner.set(token, id);
    }
    if (typeof source.target === "object" && "embedTenantFromGroup" in source.target) {
      const { pattern } = source.target.embedTenantFromGroup;
      try {
        new RegExp(pattern);
      } catch (err) {
        problems.push(`sources.${id}.target.embedTenantFromGroup.pattern: ${(err as Error).message}`);
      }
    }
  }
  for (const t of config.admin.tokens) {
    const token = typeof t === "string" ? t : t.token;
    if (owner.has(token)) problems.push("admin.tokens: an admin token is also a source token");
  }
  return problems;
}

/** Reads the YAML file named by SCIM_BRIDGE_CONFIG (or `file`). */
export function loadConfigFile(file: string, env: ConfigEnv): Config {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (err) {
    throw new ConfigError([`${file}: ${(err as Error).message}`]);
  }
  let raw: unknown;
  try {
    raw = parseConfigYaml(text);
  } catch (err) {
    throw new ConfigError([`${file}: not valid YAML: ${(err as Error).message}`]);
  }
  return buildConfig(raw, env, { refuseShortSigningKeys: true });
}

const REFERENCE = /\$\{[A-Za-z_][A-Za-z0-9_]*(?::-[^}\n]*)?\}/g;
const PLACEHOLDER = /__SCIM_BRIDGE_REF_(\d+)__/g;

/**
 * Parses the config file's YAML with its `${VAR}` references kept intact. A reference may stand
 * where YAML would read its braces as syntax (`okta: {secret: ${OKTA_HOOK_SECRET}}`, as the
 * design card writes it), so each one is swapped for a plain placeholder before parsing and put
 * back into the parsed strings after; `buildConfig` then interpolates them. Values never pass
 * through the YAML parser, so a secret's characters cannot change the file's structure.
 */
export function parseConfigYaml(text: string): unknown {
  const refs: string[] = [];
  const safe = text.replace(REFERENCE, (ref) => `__SCIM_BRIDGE_REF_${refs.push(ref) - 1}__`);
  const restore = (value: unknown): unknown => {
    if (typeof value === "string") return value.replace(PLACEHOLDER, (m, i: string) => refs[Number(i)] ?? m);
    if (Array.isArray(value)) return value.map(restore);
    if (value !== null && typeof value === "object") {
      return Object.fromEntries(Object.entries(value).map(([k, v]) => [restore(k) as string, restore(v)]));
    }
    return value;
  };
  return restore(parseYaml(safe));
}
