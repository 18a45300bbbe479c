import { describe, expect, it } from "vitest";
import { parseByteSize } from "../../src/config/byte-size.js";
import { ConfigError, buildConfig } from "../../src/config/load-config.js";

const platform = { baseUrl: "https://acme.example.com", token: "x" };
const minimal = { platform, sources: { okta: { tokens: ["t1"] } } };

function problems(maxAnswerBytes: unknown): string[] {
  try {
    buildConfig({ ...minimal, platform: { ...platform, maxAnswerBytes } });
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
  return [];
}

describe("platform.maxAnswerBytes", () => {
  it("is 16 MiB by default", () => {
    const size = buildConfig(minimal).platform.maxAnswerBytes;
    expect(parseByteSize(size)).toBe(16 * 1024 * 1024);
  });

  it("takes a size with a unit, or bytes", () => {
    for (const [value, bytes] of [
      ["64mb", 64 * 1024 * 1024],
      ["512kb", 512 * 1024],
      ["1gb", 1024 ** 3],
      ["100000", 100_000],
      // A YAML number: bytes.
      [33_554_432, 33_554_432],
    ] as const) {
      const got = buildConfig({ ...minimal, platform: { ...platform, maxAnswerBytes: value } });
      expect(parseByteSize(got.platform.maxAnswerBytes), String(value)).toBe(bytes);
    }
  });

  it.each(["0", "0kb", "lots", "-1mb", "16 MiB", 0, -5, null, true])(
    "refuses %j, naming the key",
    (value) => {
      expect(problems(value)).toEqual([
        'platform.maxAnswerBytes: must be a size such as "16mb", "64mb" or a number of bytes',
      ]);
    },
  );
});
