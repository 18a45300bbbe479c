/**
 * Replays request sequences of JumpCloud, PingFederate, Keycloak, Google Workspace and OneLogin (fixtures in
 * test/fixtures/acceptance/replays, written from the providers' public documentation) against the
 * SCIM routes over a real Redis, with the same runner as test/conformance/idp-replay.test.ts.
 */
import { expect, it } from "vitest";
import { describeReplays } from "../helpers/idp-replay.js";

const TOKEN = "replay-token";
const fixtures = describeReplays(
  new URL("../fixtures/acceptance/replays/", import.meta.url),
  "acceptance-replay",
  () => ({
    source: "idp",
    token: TOKEN,
    config: { sources: { idp: { tokens: [TOKEN] } } },
  }),
);

it("has replays to run", () => {
  expect(fixtures.length).toBeGreaterThanOrEqual(3);
});
