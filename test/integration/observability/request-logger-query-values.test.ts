/**
 * At debug the request line carries the query (routes/middleware/request-logger.ts, loggedQuery),
 * with nothing personal in it: a filter keeps only operators, keywords and the schemas' attribute
 * names, and the list parameters (`attributes`, `sortBy`, `startIndex`, `count`, ...) are written
 * only when they hold what their name says (attribute names, numbers). **Was a bug** (found in
 * review round r): a bare login (`filter=jane.doe`), a value after an operator the grammar does not
 * have (`userName == jane.doe`) or after `pr`, and any value of the list parameters were written as
 * they are.
 */
import { Writable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { maskFilterLiterals } from "../../../routes/middleware/request-logger.js";
import { type TestBridge, startTestBridge } from "../../helpers/bridge-harness.js";

const LOGIN = "jane.doe-rvwf";
const EMAIL = "jane.doe-rvwf@example.com";
const lines: string[] = [];
let h: TestBridge;

beforeAll(async () => {
  const sink = new Writable({
    write(chunk, _enc, done) {
      for (const line of chunk.toString().split("\n")) if (line.trim()) lines.push(line);
      done();
    },
  });
  h = await startTestBridge("request-logger-query-values", {
    log: { level: "debug", destination: sink },
    sources: { okta: { tokens: ["okta-token"] } },
  });
}, 60_000);
afterAll(async () => {
  await h?.close();
});

describe("debug request lines", () => {
  it("maskFilterLiterals hides a bare login and a value after an unknown operator", () => {
    for (const filter of [LOGIN, `userName == ${LOGIN}`, `userName = ${LOGIN}`, `userName pr ${LOGIN}`]) {
      expect(maskFilterLiterals(filter)).not.toContain(LOGIN);
    }
  });

  it("no request line at debug holds the login, whatever the query", async () => {
    const okta = h.scim("okta");
    const queries = [
      `filter=${encodeURIComponent(LOGIN)}`,
      `filter=${encodeURIComponent(`userName == ${LOGIN}`)}`,
      `filter=${encodeURIComponent(`userName = ${LOGIN}`)}`,
      `attributes=${encodeURIComponent(EMAIL)}`,
      `sortBy=${encodeURIComponent(EMAIL)}`,
    ];
    for (const q of queries) await okta.get(`/Users?${q}`);
    await new Promise((r) => setTimeout(r, 100));
    expect(lines.filter((l) => l.includes('"request completed"')).length).toBeGreaterThanOrEqual(
      queries.length,
    );
    expect(lines.filter((l) => l.includes(LOGIN))).toEqual([]);
  });
});
