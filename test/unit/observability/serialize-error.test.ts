/**
 * The logger's error serializer keeps no argument of a Redis command, on the error itself and on
 * the errors it carries: ioredis's EXECABORT (a MULTI refused) holds the queued commands' errors in
 * `previousErrors`, each with its `command.args` (key names, userNames, whole user records).
 */
import { describe, expect, it } from "vitest";
import { serializeError } from "../../../src/observability/logger.js";

const PERSONAL = "ada.lovelace@example.com";

function replyError(message: string, args: string[]) {
  return Object.assign(new Error(message), { name: "ReplyError", command: { name: "hset", args } });
}

describe("serializeError", () => {
  it("keeps the command's name, never its arguments, on the error and on its previousErrors, errors and cause", () => {
    const execAbort = Object.assign(
      new Error("EXECABORT Transaction discarded because of previous errors."),
      {
        name: "ReplyError",
        command: { name: "exec", args: [] },
        previousErrors: [replyError("ERR wrong number of arguments", [`idx:${PERSONAL}`, PERSONAL])],
      },
    );
    const aggregate = new AggregateError([replyError("WRONGTYPE", [PERSONAL])], "several failed");
    const caused = new Error("audit failed", { cause: replyError("NOPERM", [PERSONAL]) });
    for (const err of [execAbort, aggregate, caused]) {
      const line = JSON.stringify(serializeError(err));
      expect(line).not.toContain(PERSONAL);
    }
    const out = serializeError(execAbort) as {
      command: unknown;
      previousErrors: Array<{ command: unknown; message: string }>;
    };
    expect(out.command).toEqual({ name: "exec" });
    expect(out.previousErrors[0]).toMatchObject({
      command: { name: "hset" },
      message: "ERR wrong number of arguments",
    });
  });

  it("leaves values that are not errors as they are", () => {
    expect(serializeError("text")).toBe("text");
    expect(serializeError(null)).toBe(null);
  });
});
