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
