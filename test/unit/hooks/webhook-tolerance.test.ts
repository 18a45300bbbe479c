import { describe, expect, it } from "vitest";
import { DEFAULT_TOLERANCE_SECONDS, withinTolerance } from "../../../src/hooks/standard-webhooks.js";

const TS = 1614265330;

describe("webhook-timestamp tolerance, in whole seconds (as the reference libraries count it)", () => {
  it("accepts exactly 300 s either way, whatever the milliseconds of now", () => {
    for (const ms of [0, 1, 500, 999]) {
      expect(withinTolerance(TS, (TS + 300) * 1000 + ms, DEFAULT_TOLERANCE_SECONDS)).toBe(true);
      expect(withinTolerance(TS, (TS - 300) * 1000 + ms, DEFAULT_TOLERANCE_SECONDS)).toBe(true);
    }
  });

  it("refuses 301 s either way", () => {
    expect(withinTolerance(TS, (TS + 301) * 1000, DEFAULT_TOLERANCE_SECONDS)).toBe(false);
    expect(withinTolerance(TS, (TS - 301) * 1000 + 999, DEFAULT_TOLERANCE_SECONDS)).toBe(false);
  });
});
