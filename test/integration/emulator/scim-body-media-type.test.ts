/**
 * Every SCIM request body of platform-api.yaml is declared with one media type,
 * `application/scim+json` (POST/PUT/PATCH under /api/scim/v2). The emulator refuses
 * `application/json` there (a violation), as it refuses the mirror case (a /api/v1 body sent as
 * application/scim+json: contract-variations.test.ts), so a client change that sent SCIM bodies as
 * application/json fails the emulator-backed tests as a server that holds to the YAML would refuse
 * it. **Was** accepted (found in review round r).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createPlatformEmulator,
  type PlatformEmulator,
} from "../../../src/platform/emulator/platform-emulator.js";

const TOKEN = "t";
let emulator: PlatformEmulator;
let url: string;

beforeAll(async () => {
  emulator = createPlatformEmulator({ token: TOKEN, seed: 3 });
  url = await emulator.start({ port: 0 });
});

afterAll(async () => {
  await emulator?.close();
});

describe("the emulator holds SCIM request bodies to the contract's media type", () => {
  it("records a violation for a SCIM create sent as application/json", async () => {
    const answer = await fetch(`${url}/api/scim/v2/Users`, {
      method: "POST",
      headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
      body: JSON.stringify({ schemas: ["urn:ietf:params:scim:schemas:core:2.0:User"], userName: "ada" }),
    });
    await answer.text();
    expect(answer.status).toBe(400);
    expect(
      emulator
        .violations()
        .map((v) => v.reason)
        .join("\n"),
    ).toMatch(/Content-Type/);
  });
});
