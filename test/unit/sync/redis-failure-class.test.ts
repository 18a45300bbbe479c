import { DelayedError, UnrecoverableError, Worker } from "bullmq";
import { describe, expect, it } from "vitest";
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
});
