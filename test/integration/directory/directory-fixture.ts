import { randomUUID } from "node:crypto";
import { Redis } from "ioredis";
import { RedisDirectoryStore } from "../../../src/directory/redis-directory-store.js";
import type { ChangeNotifier } from "../../../src/directory/directory-types.js";
import type { FilterNode } from "../../../src/scim/filter-types.js";
import type { EntityRef, Json, JsonObject, ScimUser } from "../../../src/scim/scim-types.js";
import { SCHEMA_GROUP, SCHEMA_USER } from "../../../src/scim/scim-types.js";

/** Shared set-up of the directory integration tests: a real Redis, a random prefix per file. */

export const REDIS_URL = "redis://127.0.0.1:6379";

export function newPrefix(): string {
  return `{test-dir-${randomUUID()}}`;
}

export function newRedis(): Redis {
  return new Redis(REDIS_URL, { maxRetriesPerRequest: 1, enableOfflineQueue: true, lazyConnect: false });
}

/** Resolves a dotted path (case-insensitive names) to the values it reaches (arrays flattened). */
function valuesAt(resource: Json, path: string): Json[] {
  let current: Json[] = [resource];
  for (const part of path.split(".")) {
    const next: Json[] = [];
    for (const value of current) {
      for (const item of Array.isArray(value) ? value : [value]) {
        if (item && typeof item === "object" && !Array.isArray(item)) {
          const key = Object.keys(item).find((k) => k.toLowerCase() === part.toLowerCase());
          if (key !== undefined) next.push(item[key] as Json);
        }
      }
    }
    current = next.flatMap((v) => (Array.isArray(v) ? v : [v]));
  }
  return current;
}

function norm(value: Json): Json {
  return typeof value === "string" ? value.toLowerCase() : value;
}

/** A small matcher for the filters these tests use (eq, ne, co, sw, pr, and, or, not). */
export function testMatcher(node: FilterNode, resource: JsonObject): boolean {
  switch (node.type) {
    case "and":
      return testMatcher(node.left, resource) && testMatcher(node.right, resource);
    case "or":
      return testMatcher(node.left, resource) || testMatcher(node.right, resource);
    case "not":
      return !testMatcher(node.expr, resource);
    case "present":
      return valuesAt(resource, node.path).some((v) => v !== null && v !== "");
    case "valuePath":
      return valuesAt(resource, node.path).some(
        (v) => v !== null && typeof v === "object" && !Array.isArray(v) && testMatcher(node.filter, v),
      );
    case "compare": {
      const values = valuesAt(resource, node.path).map(norm);
      const want = norm(node.value);
      if (node.op === "ne") return !values.includes(want);
      return values.some((v) => {
        if (node.op === "eq") return v === want;
        if (typeof v !== "string" || typeof want !== "string") return false;
        if (node.op === "co") return v.includes(want);
        if (node.op === "sw") return v.startsWith(want);
        if (node.op === "ew") return v.endsWith(want);
        return false;
      });
    }
  }
}

export interface Harness {
  redis: Redis;
  prefix: string;
  store: RedisDirectoryStore;
  notified: EntityRef[][];
  /** Replace to make notify fail, count calls, ... */
  setNotify(notify: ChangeNotifier): void;
  keysUnder(pattern: string): Promise<string[]>;
  close(): Promise<void>;
}

export function createHarness(
  options: { scanChunkSize?: number; matcher?: typeof testMatcher } = {},
): Harness {
  const redis = newRedis();
  const prefix = newPrefix();
  const notified: EntityRef[][] = [];
  let notify: ChangeNotifier = async (refs) => {
    notified.push(refs);
  };
  const store = new RedisDirectoryStore({
    redis,
    prefix,
    notify: (refs) => notify(refs),
    matchesFilter: options.matcher ?? testMatcher,
    scanChunkSize: options.scanChunkSize,
  });
  const keysUnder = async (pattern: string) => {
    const keys: string[] = [];
    let cursor = "0";
    do {
      const [next, batch] = await redis.scan(cursor, "MATCH", pattern, "COUNT", 1000);
      cursor = next;
      keys.push(...batch);
    } while (cursor !== "0");
    return keys;
  };
  return {
    redis,
    prefix,
    store,
    notified,
    setNotify(next) {
      notify = next;
    },
    keysUnder,
    async close() {
      const keys = await keysUnder(`${prefix}:*`);
      for (let i = 0; i < keys.length; i += 500) await redis.del(...keys.slice(i, i + 500));
      redis.disconnect();
    },
  };
}

export function user(userName: string, extra: JsonObject = {}): Omit<ScimUser, "id"> {
  return { schemas: [SCHEMA_USER], userName, active: true, ...extra };
}

export function group(displayName: string, extra: JsonObject = {}) {
  return { schemas: [SCHEMA_GROUP], displayName, ...extra };
}

/** A filter `path op "value"`. */
export function cmp(path: string, op: "eq" | "ne" | "co" | "sw", value: string | boolean): FilterNode {
  return { type: "compare", path, op, value };
}
