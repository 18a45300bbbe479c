import { describe, expect, it } from "vitest";
import { failureLogFields } from "../../../jobs/reconcile/failure-log-fields.js";
import { PlatformError } from "../../../src/platform/platform-error.js";
import { SyncError, refusedMembersError } from "../../../src/sync/sync-error.js";

const EMAIL = "zz.echo.fields.n@example.com";

function refusal(): PlatformError {
  return new PlatformError(`patchGroup: platform answered 400 (invalidValue: ${EMAIL} may not join)`, {
    operation: "patchGroup",
    failure: "bad_request",
    transient: false,
    httpStatus: 400,
  });
}

/** What a log line about a failed run, resync or job says of its error (jobs/reconcile/failure-log-fields.ts). */
describe("failureLogFields", () => {
  it("names a platform failure by its code, operation and status, never its words", () => {
    const fields = failureLogFields(refusal());
    expect(fields).toEqual({ err: "platform_bad_request", operation: "patchGroup", status: 400 });
  });

  it("names an error that carries a platform failure (a sync's refusal) by codes too", () => {
    const fields = failureLogFields(refusedMembersError({ added: 1, removed: 0 }, refusal(), ["u-1"]));
    expect(JSON.stringify(fields)).not.toContain(EMAIL);
    expect(fields).toEqual({ err: "platform_bad_request", operation: "patchGroup", status: 400 });
  });

  it("looks for the platform failure down the cause chain", () => {
    const wrapped = new SyncError(`besides: ${EMAIL}`, {
      code: "platform_conflict",
      permanent: true,
      cause: new Error("outer", { cause: refusal() }),
    });
    const fields = failureLogFields(wrapped);
    expect(JSON.stringify(fields)).not.toContain(EMAIL);
    expect(fields).toMatchObject({ err: "platform_conflict", operation: "patchGroup", status: 400 });
  });

  it("names any other error (Redis, a bug) by its message", () => {
    expect(failureLogFields(new Error("connect ECONNREFUSED 127.0.0.1:6379"))).toEqual({
      err: "connect ECONNREFUSED 127.0.0.1:6379",
    });
    expect(failureLogFields("plain")).toEqual({ err: "plain" });
  });
});
