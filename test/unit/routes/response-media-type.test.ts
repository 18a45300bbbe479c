import { describe, expect, it } from "vitest";
import { PLAIN_JSON, SCIM_JSON, responseMediaType } from "../../../routes/scim/response-media-type.js";

describe("responseMediaType (RFC 7644 §3.8, RFC 9110 §12.5.1)", () => {
  it("application/json when the client prefers it to application/scim+json", () => {
    for (const accept of [
      "application/json",
      "Application/JSON",
      "application/json; charset=utf-8",
      "text/html, application/json;q=0.5",
      "application/scim+json;q=0.2, application/json",
      "application/scim+json;q=0, */*",
      "application/json, application/*;q=0.1",
    ]) {
      expect(responseMediaType(accept), accept).toBe(PLAIN_JSON);
    }
  });

  it("application/scim+json otherwise: none, wildcards, a tie, scim+json named, or neither named", () => {
    for (const accept of [
      undefined,
      "",
      "*/*",
      "application/*",
      "application/scim+json",
      "application/json, application/scim+json",
      "application/json;q=0.5, application/scim+json;q=0.5",
      "text/html",
      "application/json;q=0",
      "garbage",
    ]) {
      expect(responseMediaType(accept), String(accept)).toBe(SCIM_JSON);
    }
  });
});
