import { ReplyError } from "ioredis";
import { describe, expect, it } from "vitest";
import { toStoreError } from "../../../src/directory/redis-failure.js";
import { NotFoundError, ServiceUnavailableError } from "../../../src/errors.js";

describe("toStoreError", () => {
  it("answers 503 for Redis being unreachable, slow or busy", () => {
    for (const err of [
      new Error("Connection is closed."),
      new Error("Stream isn't writeable and enableOfflineQueue options is false"),
      new Error("Command timed out"),
      new ReplyError("LOADING Redis is loading the dataset in memory"),
      new ReplyError("BUSY Redis is busy running a script"),
      new ReplyError("READONLY You can't write against a read only replica."),
    ]) {
      const mapped = toStoreError(err);
      expect(mapped, err.message).toBeInstanceOf(ServiceUnavailableError);
      expect((mapped as ServiceUnavailableError).status).toBe(503);
    }
  });

  it("keeps an application error, a wrong command's error reply and a programming error as they are (not an outage)", () => {
    const appError = new NotFoundError("User u not found");
    expect(toStoreError(appError)).toBe(appError);
    const wrongType = new ReplyError("WRONGTYPE Operation against a key holding the wrong kind of value");
    expect(toStoreError(wrongType)).toBe(wrongType);
    // The ioredis auto-pipelining bug (redis/ioredis#1931) surfaced as this TypeError, and was
    // answered as a Redis outage (503).
    for (const bug of [
      new TypeError("pipeline[functionName] is not a function"),
      new RangeError("Invalid array length"),
      new SyntaxError("Unexpected token } in JSON"),
    ]) {
      expect(toStoreError(bug)).toBe(bug);
    }
  });
});

describe("isRedisUnavailable", () => {
  it("is true for ioredis's words for a missing connection, false for bugs, replies and AppErrors", async () => {
    const { isRedisUnavailable } = await import("../../../src/directory/redis-failure.js");
    const { ServiceUnavailableError } = await import("../../../src/errors.js");
    const named = (name: string, message: string) => Object.assign(new Error(message), { name });
    expect(
      isRedisUnavailable(new Error("Stream isn't writeable and enableOfflineQueue options is false")),
    ).toBe(true);
    expect(isRedisUnavailable(new Error("Connection is closed."))).toBe(true);
    expect(isRedisUnavailable(new Error("connect ECONNREFUSED 127.0.0.1:6390"))).toBe(true);
    expect(
      isRedisUnavailable(named("MaxRetriesPerRequestError", "Reached the max retries per request limit")),
    ).toBe(true);
    expect(isRedisUnavailable(named("ReplyError", "LOADING Redis is loading the dataset in memory"))).toBe(
      true,
    );
    expect(isRedisUnavailable(named("ReplyError", "ERR wrong number of arguments"))).toBe(false);
    expect(
      isRedisUnavailable(new Error("Stream isn't writeable and enableOfflineQueue options is false")),
    ).toBe(true);
    expect(isRedisUnavailable(Object.assign(new Error("connect failed"), { code: "ECONNRESET" }))).toBe(true);
    expect(isRedisUnavailable(named("ReplyError", "CLUSTERDOWN The cluster is down"))).toBe(true);
    expect(isRedisUnavailable(new TypeError("Connection is closed"))).toBe(false);
    expect(isRedisUnavailable(new Error("something else"))).toBe(false);
    expect(isRedisUnavailable(new ServiceUnavailableError("busy"))).toBe(false);
    expect(isRedisUnavailable("Connection is closed")).toBe(false);
  });
});
