import { describe, expect, it } from "vitest";
import { checkGroupName } from "../../../routes/scim/group-handlers.js";
import { characterCount } from "../../../src/mapping/plan-embed-group.js";
import { buildConfig } from "../../../src/config/load-config.js";

const config = buildConfig({
  platform: { baseUrl: "https://platform.example.com", token: "x" },
  admin: { tokens: ["admin"] },
  sources: {
    ws: { tokens: ["ws-token"] },
    embed: { tokens: ["embed-token"], target: { embedTenant: "acme" }, groupPrefix: "idp-" },
  },
  logLevel: "silent",
});

describe("characterCount", () => {
  it("counts code points: an emoji or a CJK Extension B ideograph is one character", () => {
    expect(characterCount("")).toBe(0);
    expect(characterCount("abc")).toBe(3);
    expect(characterCount("🌍")).toBe(1);
    expect(characterCount("𠮷野家")).toBe(3);
  });
});

describe("checkGroupName (platform-api.yaml createEmbedGroup: name maxLength 200)", () => {
  it("counts the prefix and the displayName in characters, not UTF-16 code units", () => {
    expect(() => checkGroupName(config, "embed", { displayName: "🌍".repeat(196) })).not.toThrow();
    expect(() => checkGroupName(config, "embed", { displayName: "🌍".repeat(197) })).toThrow(
      expect.objectContaining({
        status: 400,
        scimType: "invalidValue",
        message: expect.stringContaining("has 201"),
      }),
    );
  });

  it("leaves a workspace source's group names alone", () => {
    expect(() => checkGroupName(config, "ws", { displayName: "L".repeat(500) })).not.toThrow();
  });
});
