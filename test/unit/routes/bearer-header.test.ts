/** routes/bearer-header.ts: the bearer token of an Authorization header (RFC 6750 §2.1). */
import { describe, expect, it } from "vitest";
import { bearerTokenOf } from "../../../routes/bearer-header.js";

describe("bearerTokenOf", () => {
  it("takes the token after the scheme, in any case, after one or more spaces", () => {
    expect(bearerTokenOf("Bearer abc.DEF-123_~+/=")).toBe("abc.DEF-123_~+/=");
    expect(bearerTokenOf("bearer abc")).toBe("abc");
    expect(bearerTokenOf("BEARER    abc")).toBe("abc");
    expect(bearerTokenOf("  Bearer abc  ")).toBe("abc");
  });

  it("has none for other schemes, a missing token, or a token with spaces in it", () => {
    expect(bearerTokenOf(undefined)).toBeUndefined();
    expect(bearerTokenOf("")).toBeUndefined();
    expect(bearerTokenOf("Basic dXNlcjpwYXNz")).toBeUndefined();
    expect(bearerTokenOf("Bearer")).toBeUndefined();
    expect(bearerTokenOf("Bearer ")).toBeUndefined();
    expect(bearerTokenOf("Bearer a b")).toBeUndefined();
    expect(bearerTokenOf("Bearerabc")).toBeUndefined();
    expect(bearerTokenOf("Bearer\tabc")).toBeUndefined();
  });
});
