/**
 * Probes-i (mapping): numbers as identity providers send them in strings. Decimal notation is a
 * number ("42", " 7 ", "4.5e1"); what JavaScript's Number() also reads but no identity provider
 * means as a number (hexadecimal, binary, octal literals) is not coerced: it is reported and the
 * platform holds no value.
 */
import { describe, expect, it } from "vitest";
import { coerceAttributeValue } from "../../../src/mapping/coerce-attribute-value.js";

describe("numbers in strings", () => {
  it.each([
    ["42", 42],
    [" 7 ", 7],
    ["4.5e1", 45],
    ["-0.5", -0.5],
    ["+3", 3],
    [".5", 0.5],
    ["5.", 5],
    ["007", 7],
    ["1E3", 1000],
  ])("%j is %j", (input, expected) => {
    expect(coerceAttributeValue(input, "number")).toEqual({ value: expected });
    expect(coerceAttributeValue([input], "number_array")).toEqual({ value: [expected] });
  });
  it.each(["0x1A", "0b11", "0o17", "Infinity", "-Infinity", "1e400", "1,5", "1_000", "12 34", "."])(
    "%j is not a number",
    (input) => {
      expect(coerceAttributeValue(input, "number")).toHaveProperty("invalid", true);
      expect(coerceAttributeValue([input], "number_array")).toHaveProperty("invalid", true);
    },
  );
});
