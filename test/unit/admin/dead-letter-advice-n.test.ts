import { describe, expect, it } from "vitest";
import { adviceLines, deadLetterAdvice } from "../../../src/cli/dead-letter-advice.js";

describe("deadLetterAdvice", () => {
  it("names the fix docs/operations.md gives for a code", () => {
    expect(deadLetterAdvice("platform_unauthorized")).toMatch(/platform\.token.*dead-letters retry/);
    expect(deadLetterAdvice("platform_server")).toMatch(/next reconciliation/);
    expect(deadLetterAdvice("redis_unavailable")).toMatch(/next reconciliation/);
    expect(deadLetterAdvice("platform_bulk_internal")).toMatch(/next reconciliation/);
    expect(deadLetterAdvice("platform_bulk_FORBIDDEN")).toMatch(/bulk action/);
    expect(deadLetterAdvice("unknown_source")).toMatch(/dead-letters discard/);
    expect(deadLetterAdvice("platform_invalid_response")).toMatch(/contract.*maxAnswerBytes.*retry/);
  });

  it("gives none for a code it does not know, or no code", () => {
    expect(deadLetterAdvice("no_embed_tenant_x")).toBeUndefined();
    expect(deadLetterAdvice("toString")).toBeUndefined();
    expect(deadLetterAdvice(undefined)).toBeUndefined();
  });

  it("prints one line per code, counted, in the order the codes come", () => {
    expect(
      adviceLines(["platform_conflict", "platform_unauthorized", "platform_conflict", "whatever"]),
    ).toEqual([
      `  platform_conflict (2): ${deadLetterAdvice("platform_conflict")}`,
      `  platform_unauthorized (1): ${deadLetterAdvice("platform_unauthorized")}`,
    ]);
    expect(adviceLines([])).toEqual([]);
  });
});
