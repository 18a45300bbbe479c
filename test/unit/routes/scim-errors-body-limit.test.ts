/**
 * A body over `server.bodyLimit` is refused with 413 by either reader (the fast path of
 * scim-body.ts, or body-parser for compressed bodies and other charsets): both name the limit, so
 * that an IdP admin reading the provisioning log can ask the bridge's operator to raise it.
 */
import { describe, expect, it } from "vitest";
import { bodyTooLarge, toAppError } from "../../../routes/scim/scim-errors.js";

describe("413 for a body over the limit", () => {
  it("names the configured limit as written (the fast path)", () => {
    const err = bodyTooLarge("1mb");
    expect(err.status).toBe(413);
    expect(err.message).toBe(
      "The request body is larger than this service's limit of 1mb (its operator can raise server.bodyLimit)",
    );
  });

  it("names body-parser's limit in bytes", () => {
    const err = toAppError(
      Object.assign(new Error("request entity too large"), { type: "entity.too.large", limit: 1048576 }),
    );
    expect(err?.status).toBe(413);
    expect(err?.message).toMatch(/limit of 1048576 bytes/);
  });
});
