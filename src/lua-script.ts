import type { Cluster, Redis } from "ioredis";

/**
 * A Lua script the stores run by its SHA1 instead of sending its text with every call.
 *
 * It is an ioredis custom command (defineCommand), registered on a client the first time the
 * script runs there: ioredis sends EVAL the first time on each connection, EVALSHA after that, and
 * on a NOSCRIPT reply (after SCRIPT FLUSH, a Redis restart or a failover) sends the same call again
 * as EVAL, once. A script runs atomically either way, and NOSCRIPT means it did not run at all.
 *
 * Clients are shared between stores, and custom commands live on the client, so each script has a
 * name of its own (namespaced, e.g. `scimHookSetMarksIf`): two different scripts of one name throw,
 * and so does a name the client already has (a built-in command, or a command defined elsewhere).
 *
 * A script is never auto-pipelined (enableAutoPipelining, the intake's store client): it goes out
 * on its own write. ioredis (6.0.0 and earlier, redis/ioredis#1931) copies a client's custom
 * commands into an automatic pipeline when it creates the pipeline, so a script defined here while
 * commands of the same turn of the event loop wait in one was missing from it: the script rejected
 * with "pipeline[functionName] is not a function", and the pipeline's replies no longer matched
 * its callers ("results[i] is not iterable", thrown out of ioredis). Other commands still share
 * writes. Sent on its own, a script may reach Redis before commands issued just before it that
 * wait in an automatic pipeline (as a MULTI does); the stores await each call, so their order holds.
 */

export type ScriptArg = string | number;

export interface LuaScript<R> {
  readonly name: string;
  /** Runs the script on `redis` with KEYS = `keys` and ARGV = `args`; rejects as the command would. */
  run(redis: Redis | Cluster, keys: readonly string[], args: readonly ScriptArg[]): Promise<R>;
}

type ScriptCommand = (numberOfKeys: number, ...keysAndArgs: ScriptArg[]) => Promise<unknown>;

const scripts = new Map<string, { lua: string; script: LuaScript<unknown> }>();

/**
 * Declares a script (at module level); `R` is what its reply is taken to be. Declaring the same
 * name and text again gives the same script; the same name with another text throws.
 */
export function luaScript<R = unknown>(name: string, lua: string): LuaScript<R> {
  const known = scripts.get(name);
  if (known) {
    if (known.lua !== lua) throw new Error(`two Lua scripts are named ${name}`);
    return known.script as LuaScript<R>;
  }
  const definedOn = new WeakSet<Redis | Cluster>();
  const script: LuaScript<R> = {
    name,
    run(redis, keys, args) {
      if (!definedOn.has(redis)) {
        if (name in redis) throw new Error(`the Redis client already has a command named ${name}`);
        // A new array: ioredis's default one is shared by every client.
        const ignored = redis.options.autoPipeliningIgnoredCommands ?? [];
        redis.options.autoPipeliningIgnoredCommands = [...ignored, name];
        // No numberOfKeys: each call passes its own count, so a script may take any number of keys.
        redis.defineCommand(name, { lua });
        definedOn.add(redis);
      }
      const command = (redis as unknown as Record<string, ScriptCommand>)[name] as ScriptCommand;
      return command.call(redis, keys.length, ...keys, ...args) as Promise<R>;
    },
  };
  scripts.set(name, { lua, script });
  return script;
}
