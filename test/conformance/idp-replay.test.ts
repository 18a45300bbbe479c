/**
 * Replays request sequences of real identity providers (fixtures in test/fixtures/conformance,
 * written from Okta's SCIM 2.0 reference and spec test, and from Microsoft's Entra ID SCIM
 * tutorial and compliance article) against the SCIM routes over a real Redis.
 */
import { expect, it } from "vitest";
import { describeReplays } from "../helpers/idp-replay.js";
import { ENTRA_TOKEN, OKTA_TOKEN } from "../helpers/scim-test-app.js";

const fixtures = describeReplays(
  new URL("../fixtures/conformance/", import.meta.url),
  "conformance",
  (file) =>
    file.startsWith("entra")
      ? { source: "entra", token: ENTRA_TOKEN }
      : { source: "okta", token: OKTA_TOKEN },
);

it("has Okta and Entra replays to run", () => {
  expect(fixtures.some((f) => f.startsWith("okta"))).toBe(true);
  expect(fixtures.some((f) => f.startsWith("entra"))).toBe(true);
});
