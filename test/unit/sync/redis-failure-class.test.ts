import { DelayedError, UnrecoverableError, Worker } from "bullmq";
import { describe, expect, it } from "vitest";
import { toStoreError } from "../../../src/directory/redis-failure.js";
import { ServiceUnavailableError } from "../../../src/errors.js";
import { PlatformError } from "../../../src/platform/platform-error.js";
import { REDIS_UNAVAILABLE, classifyFailure, isRedisFailure } from "../../../src/sync/sync-error.js";

/** Which failures are Redis's (the sync waits for it) and which are not (attempts, dead letters). */
describe("isRedisFailure / classifyFailure: Redis could not serve", () => {
  it("the directory store's 503 and ioredis's connection failures are", () => {
    for (const err of [
      new ServiceUnavailableError("The directory store (Redis) is unavailable"),
      new Error("Command timed out"),
      new Error("Connection is closed."),
      new Error("Stream isn't writeable and enableOfflineQueue options is false"),
      Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:6379"), { code: "ECONNREFUSED" }),
    ]) {
      expect(isRedisFailure(err), err.message).toBe(true);
      expect(classifyFailure(err)).toMatchObject({
        code: REDIS_UNAVAILABLE,
        permanent: false,
        redisUnavailable: true,
      });
    }
  });

  it("a platform's refused connection, and the job layer's errors naming one, are not", () => {
    const platform = new PlatformError(
      "createUser: connection failed (ECONNREFUSED: connect ECONNREFUSED 127.0.0.1:41645)",
      { operation: "createUser", failure: "network", transient: true },
    );
    expect(isRedisFailure(platform)).toBe(false);
    expect(classifyFailure(platform).code).toBe("platform_network");
    // What the processor throws after recording a dead letter, with the reason as its message.
    expect(isRedisFailure(new UnrecoverableError(`platform_network: ${platform.message}`))).toBe(false);
    expect(isRedisFailure(Worker.RateLimitError())).toBe(false);
    expect(isRedisFailure(new DelayedError("Command timed out"))).toBe(false);
  });

  it("an error reply that means a bug is not: it is internal", () => {
    const reply = Object.assign(
      new Error("WRONGTYPE Operation against a key holding the wrong kind of value"),
      {
        name: "ReplyError",
      },
    );
    expect(isRedisFailure(reply)).toBe(false);
    expect(classifyFailure(reply).code).toBe("internal");
  });

  it("what the store wrapped as a 503 counts by its cause: a timeout is, MOVED/ASK are not", () => {
    const reply = (message: string) => Object.assign(new Error(message), { name: "ReplyError" });
    const wait = [
      toStoreError(new Error("Command timed out")),
      toStoreError(reply("LOADING Redis is loading the dataset in memory")),
      toStoreError(reply("READONLY You can't write against a read only replica.")),
      // The store's own 503 (too many concurrent writes to one entity): no cause, a wait.
      new ServiceUnavailableError("Too many concurrent writes to this user; retry"),
    ];
    for (const err of wait) expect(isRedisFailure(err), String(err.cause ?? err.message)).toBe(true);
    const notWait = [
      reply("MOVED 3999 127.0.0.1:6381"),
      reply("ASK 3999 127.0.0.1:6381"),
      toStoreError(reply("MOVED 3999 127.0.0.1:6381")),
      toStoreError(reply("ASK 3999 127.0.0.1:6381")),
    ];
    for (const err of notWait) {
      expect(isRedisFailure(err), String(err.cause ?? err.message)).toBe(false);
      expect(classifyFailure(err).code).toBe("internal");
    }
    // The API's answer is unchanged: the store still maps them to a 503.
    expect(toStoreError(reply("MOVED 3999 127.0.0.1:6381"))).toBeInstanceOf(ServiceUnavailableError);
  });

  it("a failover's words wait: a pipeline aborted by the connection's close, resolver and socket failures", () => {
    const coded = (code: string, message: string) => Object.assign(new Error(message), { code });
    const failover = [
      // ioredis rejects the rest of a partly sent pipeline or MULTI (the directory's snapshot reads).
      Object.assign(new Error("Command aborted due to connection close"), { name: "AbortError" }),
      coded("ENOTFOUND", "getaddrinfo ENOTFOUND redis.internal"),
      coded("EAI_AGAIN", "getaddrinfo EAI_AGAIN redis.internal"),
      coded("EHOSTUNREACH", "connect EHOSTUNREACH 10.0.0.7:6379"),
      coded("ENETUNREACH", "connect ENETUNREACH 10.0.0.7:6379"),
      coded("ECONNRESET", "read ECONNRESET"),
      coded("EPIPE", "write EPIPE"),
      coded("ETIMEDOUT", "connect ETIMEDOUT"),
      new Error("Socket timeout. Expecting data, but didn't receive any in 5000ms."),
      new Error("Connection is closed."),
      new Error("Stream isn't writeable and enableOfflineQueue options is false"),
    ];
    for (const err of failover) {
      // Met outside the store (the request budget, the sync state) and wrapped by `guarded`.
      for (const seen of [err, toStoreError(err)]) {
        expect(isRedisFailure(seen), err.message).toBe(true);
        expect(classifyFailure(seen).code, err.message).toBe(REDIS_UNAVAILABLE);
      }
    }
  });

  it("whatever else `guarded` wrapped waits, but MOVED/ASK and programming errors do not", () => {
    // The client's words vary; a failure to talk to Redis that no list names still waits (bounded).
    expect(isRedisFailure(toStoreError(new Error("unexpected reply shape")))).toBe(true);
    expect(isRedisFailure(new ServiceUnavailableError("unavailable", "a string"))).toBe(true);
    const reply = (message: string) => Object.assign(new Error(message), { name: "ReplyError" });
    for (const cause of [
      reply("MOVED 3999 127.0.0.1:6381"),
      reply("ASK 3999 127.0.0.1:6381"),
      reply("WRONGTYPE Operation against a key holding the wrong kind of value"),
      new TypeError("Cannot read properties of undefined (reading 'id')"),
      new RangeError("Invalid array length"),
    ]) {
      const wrapped = new ServiceUnavailableError("The directory store (Redis) is unavailable", cause);
      expect(isRedisFailure(wrapped), cause.message).toBe(false);
      expect(classifyFailure(wrapped).code, cause.message).toBe("internal");
    }
  });
});
