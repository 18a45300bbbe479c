import { describe, expect, it } from "vitest";
import { ConfigError, buildConfig } from "../../src/config/load-config.js";

const platform = { baseUrl: "https://acme.example.com", token: "x" };
const minimal = { platform, sources: { okta: { tokens: ["t1"] } } };

function problems(retryAfterCapMs: unknown): string[] {
  try {
    buildConfig({ ...minimal, platform: { ...platform, retryAfterCapMs } });
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
  return [];
}

describe("platform.retryAfterCapMs", () => {
  it("is 300000 (5 minutes) by default", () => {
    expect(buildConfig(minimal).platform.retryAfterCapMs).toBe(300_000);
  });

  it("takes a whole number of milliseconds, 1 or more", () => {
    expect(
      buildConfig({ ...minimal, platform: { ...platform, retryAfterCapMs: 60_000 } }).platform,
    ).toMatchObject({
      retryAfterCapMs: 60_000,
    });
    expect(
      buildConfig({ ...minimal, platform: { ...platform, retryAfterCapMs: 1 } }).platform.retryAfterCapMs,
    ).toBe(1);
  });

  it.each([0, -1, -300_000, 1.5, "300000", "5m", null])("refuses %j, naming the key", (value) => {
    expect(problems(value)).toEqual([
      "platform.retryAfterCapMs: must be a whole number of milliseconds, 1 or more (e.g. 300000 for 5 minutes)",
    ]);
  });
});
