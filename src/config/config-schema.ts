import { z } from "zod";
import { parseByteSize } from "./byte-size.js";

/**
 * A record whose keys must match `pattern`. A bad key is named with `message` at its own path, and
 * the value under it is still validated: zod's own key schema reports only "Invalid key in record"
 * and skips the value, so the other problems in it would go unnamed ("every problem named").
 */
function recordWithKeys<T extends z.ZodType>(pattern: RegExp, message: string, value: T) {
  return z.record(z.string(), value).superRefine(
    (record, ctx) => {
      for (const key of Object.keys(record)) {
        if (!pattern.test(key)) ctx.addIssue({ code: "custom", message, path: [key], input: key });
      }
    },
    // Also when a value under the record has problems of its own (by default zod then skips refinements).
    { when: (payload) => isPlainObject(payload.value) },
  );
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/** Where a platform attribute's value comes from, and its platform type. */
export const attributeRuleSchema = z
  .object({
    /** A SCIM attribute path: core, enterprise extension URN, custom URN, or a value filter path. */
    from: z.string().min(1),
    type: z.enum(["string", "number", "boolean", "string_array", "number_array"]),
    displayName: z.string().optional(),
  })
  .strict();

const secretHookSchema = z
  .object({
    secret: z.string().min(1),
    /** Okta only: the header that carries the secret (default: Authorization). */
    header: z.string().min(1).optional(),
  })
  .strict();

/** A bearer token as configured: plain, or `sha256:` and the 64 hex digits of its hash. */
export const tokenSchema = z
  .string()
  .min(1)
  .refine((t) => !/^sha256:/i.test(t) || /^sha256:[0-9a-f]{64}$/i.test(t), {
    message: "a sha256: token must be sha256: followed by 64 hex digits (`scim-bridge token new` prints one)",
  });

export const adminTokenSchema = z.union([
  tokenSchema,
  z
    .object({
      token: tokenSchema,
      role: z.enum(["viewer", "admin"]).default("admin"),
      name: z.string().optional(),
    })
    .strict(),
]);

export const targetSchema = z.union([
  z.literal("workspace"),
  z
    .object({
      embedTenant: z
        .string()
        .regex(/^[a-z0-9][a-z0-9-]{0,62}$/, "embed tenant names are lower-case letters, digits and dashes"),
    })
    .strict(),
  /** Derive the tenant from the group name: the first capture group of `pattern`, lower-cased. */
  z.object({ embedTenantFromGroup: z.object({ pattern: z.string().min(1) }).strict() }).strict(),
]);

export const sourceSchema = z
  .object({
    tokens: z.array(tokenSchema).min(1, "a source needs at least one token"),
    target: targetSchema.default("workspace"),
    onDelete: z.enum(["deactivate", "delete"]).default("deactivate"),
    /** Platform attribute name -> rule. */
    attributes: recordWithKeys(
      /^[A-Za-z][A-Za-z0-9_]{0,62}$/,
      "attribute names start with a letter, then letters, digits and _ (63 at most)",
      attributeRuleSchema,
    ).default({}),
    /** Prefix for platform group names created for this source. */
    groupPrefix: z.string().default(""),
    hooks: z
      .object({ okta: secretHookSchema.optional(), events: secretHookSchema.optional() })
      .strict()
      .default({}),
    /** Intake rate limit for this source (requests per second, burst = 2x). */
    rateLimit: z
      .object({ requestsPerSecond: z.number().positive().default(1000) })
      .strict()
      .default({ requestsPerSecond: 1000 }),
  })
  .strict()
  .superRefine((source, ctx) => {
    // The platform knows one definition per name, whatever its case: `dept` and `Dept` would
    // write one value in turn, and every resync would flip it.
    const seen = new Map<string, string>();
    for (const name of Object.keys(source.attributes)) {
      const other = seen.get(name.toLowerCase());
      if (other !== undefined) {
        ctx.addIssue({
          code: "custom",
          message: `"${name}" and "${other}" are one platform attribute (names are compared ignoring case): keep one`,
          path: ["attributes", name],
          input: name,
        });
      }
      seen.set(name.toLowerCase(), name);
    }
    // Attribute values belong to workspace users; an embed-tenant source's users are embed users
    // only (ARCHITECTURE.md), so the rules would be ignored without a word.
    const names = Object.keys(source.attributes);
    if (source.target !== "workspace" && names.length > 0) {
      ctx.addIssue({
        code: "custom",
        message:
          "attribute values are set on workspace users; this source's users are embed users (target is an embed tenant): remove its attributes",
        path: ["attributes"],
        input: names,
      });
    }
  });

const PROCESSES_ERROR = 'must be a whole number of processes, 1 or more, or "auto"';
/**
 * How many bridge processes one `scim-bridge start` runs, sharing the listening port(s): a whole
 * number, at least 1, or "auto" (one per CPU the process may use, os.availableParallelism()).
 */
export const processesSchema = z.union(
  [z.number().int({ error: PROCESSES_ERROR }).min(1, { error: PROCESSES_ERROR }), z.literal("auto")],
  { error: PROCESSES_ERROR },
);

const REDIS_URL_ERROR =
  "must be a redis:// or rediss:// URL (e.g. redis://127.0.0.1:6379), or a Unix socket path";

/** What ioredis connects to: a redis:// or rediss:// URL with a host, or an absolute socket path. */
export function isRedisUrl(value: string): boolean {
  if (value.startsWith("/")) return true;
  try {
    const url = new URL(value);
    return (url.protocol === "redis:" || url.protocol === "rediss:") && url.hostname !== "";
  } catch {
    return false;
  }
}

const RETRY_AFTER_CAP_ERROR = "must be a whole number of milliseconds, 1 or more (e.g. 300000 for 5 minutes)";

const MAX_ANSWER_BYTES_ERROR = 'must be a size such as "16mb", "64mb" or a number of bytes';

export const configSchema = z
  .object({
    platform: z
      .object({
        baseUrl: z.string().url(),
        token: z.string().min(1),
        requestsPerSecond: z.number().positive().default(20),
        allowInsecureHttp: z.boolean().default(false),
        timeoutMs: z.number().int().positive().default(10_000),
        maxRetries: z.number().int().min(0).default(5),
        /**
         * The longest platform Retry-After honoured, in ms: a 429 (or 503) asking for more pauses
         * every worker only this long (with a warning), then the next call asks the platform again.
         */
        retryAfterCapMs: z
          .number({ error: RETRY_AFTER_CAP_ERROR })
          .int({ error: RETRY_AFTER_CAP_ERROR })
          .min(1, { error: RETRY_AFTER_CAP_ERROR })
          .default(300_000),
        /**
         * The largest platform answer read (`16mb`, `64mb`, a number of bytes): a larger one fails
         * its call (a list page is asked again smaller, down to one resource). Raise it for a
         * platform group whose member list alone is larger (about 120k members a 16 MiB).
         */
        maxAnswerBytes: z
          .union([z.string(), z.number()], { error: MAX_ANSWER_BYTES_ERROR })
          .transform((v) => (typeof v === "number" ? String(v) : v))
          .refine((v) => (parseByteSize(v) ?? 0) > 0, { message: MAX_ANSWER_BYTES_ERROR })
          .default("16mb"),
      })
      .strict(),
    admin: z
      .object({
        tokens: z.array(adminTokenSchema).default([]),
        /** Serve /admin on its own port (optional). */
        port: z.number().int().min(0).max(65535).optional(),
      })
      .strict()
      .default({ tokens: [] }),
    reconcile: z
      .object({
        schedule: z.string().default("*/30 * * * *"),
        orphans: z.enum(["report", "deactivate"]).default("report"),
        maxDeprovisionShare: z.number().min(0).max(1).default(0.1),
        /** How many runs' reports are kept. */
        keepRuns: z.number().int().positive().default(50),
      })
      .strict()
      .default({ schedule: "*/30 * * * *", orphans: "report", maxDeprovisionShare: 0.1, keepRuns: 50 }),
    redis: z
      .object({
        url: z.string().refine(isRedisUrl, { error: REDIS_URL_ERROR }).default("redis://127.0.0.1:6379"),
        /** Key prefix of every key; the braces make a Redis Cluster hash tag. */
        prefix: z.string().default("{scim-bridge}"),
      })
      .strict()
      .default({ url: "redis://127.0.0.1:6379", prefix: "{scim-bridge}" }),
    server: z
      .object({
        port: z.number().int().min(0).max(65535).default(8080),
        host: z.string().default("0.0.0.0"),
        /** The largest request body read (SCIM, hooks, admin): `1mb`, `512kb`, a number of bytes. */
        bodyLimit: z
          .string()
          .refine((v) => parseByteSize(v) !== undefined && (parseByteSize(v) ?? 0) > 0, {
            message: 'must be a size such as "1mb", "512kb" or a number of bytes',
          })
          .default("1mb"),
        tls: z.object({ cert: z.string(), key: z.string() }).strict().optional(),
        shutdownTimeoutMs: z.number().int().positive().default(10_000),
        /**
         * After SIGTERM, how long the server keeps taking requests with /readyz answering 503
         * before it stops listening (optional; default 0: the Helm chart pauses in preStop instead).
         */
        drainDelayMs: z.number().int().min(0).optional(),
        /** Bridge processes sharing the port(s) (node:cluster); 1 runs no cluster primary. */
        processes: processesSchema.default(1),
        /**
         * Behind a reverse proxy or ingress that terminates TLS: which hops' X-Forwarded-Proto and
         * X-Forwarded-Host to believe (express's "trust proxy": true, a number of hops, or
         * addresses/subnets such as "10.0.0.0/8"), so that Location and meta.location say the
         * address the identity provider called. Default false: the request's own.
         */
        trustProxy: z.union([z.boolean(), z.number().int().min(0), z.string().min(1)]).default(false),
      })
      .strict()
      .default({
        port: 8080,
        host: "0.0.0.0",
        bodyLimit: "1mb",
        shutdownTimeoutMs: 10_000,
        processes: 1,
        trustProxy: false,
      }),
    sync: z
      .object({
        concurrency: z.number().int().positive().default(64),
        attempts: z.number().int().positive().default(8),
        lifecycleBatchWindowMs: z.number().int().min(0).default(200),
        sweepIntervalMs: z.number().int().positive().default(5_000),
        /** A dirty marker older than this with no job is re-enqueued by the sweeper. */
        sweepAfterMs: z.number().int().positive().default(10_000),
        /**
         * A platform write that timed out (no answer in time, or a gateway's 504) may still be applied
         * later: this long after it was sent, its entities are read on the platform again and put
         * right. Default: twice platform.timeoutMs.
         */
        lateWriteCheckMs: z.number().int().positive().optional(),
      })
      .strict()
      .default({
        concurrency: 64,
        attempts: 8,
        lifecycleBatchWindowMs: 200,
        sweepIntervalMs: 5_000,
        sweepAfterMs: 10_000,
      }),
    logLevel: z.enum(["trace", "debug", "info", "warn", "error", "fatal", "silent"]).default("info"),
    sources: recordWithKeys(
      /^[a-z0-9][a-z0-9_-]{0,62}$/,
      "source ids are lower-case letters, digits, - and _",
      sourceSchema,
    ),
  })
  .strict()
  .superRefine((config, ctx) => {
    for (const issue of attributeDefinitionConflicts(config.sources))
      ctx.addIssue({ code: "custom", ...issue });
  });

/**
 * Rules of several sources that name one platform attribute (names compared ignoring case, as the
 * platform does) must agree on its definition: another type makes one source's values refused for
 * good; another label would be written back and forth at every value. Pure.
 */
export function attributeDefinitionConflicts(
  sources: Record<string, { attributes: Record<string, { type: string; displayName?: string }> }>,
): Array<{ message: string; path: string[]; input: unknown }> {
  const first = new Map<string, { source: string; name: string; type: string; displayName?: string }>();
  const firstLabel = new Map<string, { source: string; displayName: string }>();
  const issues: Array<{ message: string; path: string[]; input: unknown }> = [];
  for (const [source, config] of Object.entries(sources)) {
    for (const [name, rule] of Object.entries(config.attributes)) {
      const key = name.toLowerCase();
      const path = ["sources", source, "attributes", name];
      const seen = first.get(key);
      if (!seen) first.set(key, { source, name, type: rule.type });
      else if (seen.type !== rule.type) {
        issues.push({
          message: `is one platform attribute with sources.${seen.source}.attributes.${seen.name}, whose type is ${seen.type}: give both one type`,
          path: [...path, "type"],
          input: rule.type,
        });
      }
      if (rule.displayName === undefined) continue;
      const label = firstLabel.get(key);
      if (!label) firstLabel.set(key, { source, displayName: rule.displayName });
      else if (label.displayName !== rule.displayName) {
        issues.push({
          message: `is one platform attribute with the rule of source ${label.source}, whose displayName is "${label.displayName}": give both one displayName (or leave it out of one)`,
          path: [...path, "displayName"],
          input: rule.displayName,
        });
      }
    }
  }
  return issues;
}

export type ConfigInput = z.input<typeof configSchema>;
export type Config = z.output<typeof configSchema>;
export type SourceConfig = z.output<typeof sourceSchema>;
export type AttributeRule = z.output<typeof attributeRuleSchema>;
export type AdminToken = z.output<typeof adminTokenSchema>;
