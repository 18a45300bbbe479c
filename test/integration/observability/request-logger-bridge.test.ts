/**
 * A whole bridge's request lines hold no login, however a client puts it in the request
 * (routes/middleware/request-logger.ts). Found in review round r, each **was a bug**:
 * - the SCIM router serves runs of slashes after the source as one slash (routes/scim/scim-routes.ts
 *   collapseSlashes), so `GET /scim/v2/okta/Users//jane.doe` is `GET /Users/jane.doe` (a 404 for a
 *   login put where the id goes); the request line (info level, every request) wrote the login after
 *   the empty segment as it was;
 * - at debug the line carries the query: a bare login (`filter=jane.doe`), a value after an operator
 *   the grammar does not have (`userName == jane.doe`) and any value of the list parameters
 *   (`attributes`, `sortBy`) were written as they were.
 */
import { Writable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type TestBridge, startTestBridge } from "../../helpers/bridge-harness.js";

const USER_SCHEMA = "urn:ietf:params:scim:schemas:core:2.0:User";

/** A bridge whose log lines (at `level`) are collected; closed after the file. */
function bridgeLoggingAt(name: string, level: "info" | "debug") {
  const lines: string[] = [];
  const state: { h?: TestBridge } = {};
  beforeAll(async () => {
    const sink = new Writable({
      write(chunk, _enc, done) {
        for (const line of chunk.toString().split("\n")) if (line.trim()) lines.push(line);
        done();
      },
    });
    state.h = await startTestBridge(name, {
      log: { level, destination: sink },
      sources: { okta: { tokens: ["okta-token"] } },
    });
  }, 60_000);
  afterAll(async () => {
    await state.h?.close();
  });
  const requestLines = async () => {
    await new Promise((r) => setTimeout(r, 100));
    return lines.filter((l) => l.includes('"request completed"'));
  };
  return { lines, requestLines, scim: () => (state.h as TestBridge).scim("okta") };
}

describe("a login where the id goes, after a double slash (info)", () => {
  const LOGIN = "jane.doe-rvw";
  const bridge = bridgeLoggingAt("request-logger-double-slash", "info");

  it("is served as /Users/<login> (404) and is not written to the request line", async () => {
    const okta = bridge.scim();
    // The same answer as the single-slash form: the router collapses the slashes.
    expect((await okta.get(`/Users/${LOGIN}`)).status).toBe(404);
    expect((await okta.get(`/Users//${LOGIN}`)).status).toBe(404);
    const put = await okta.put(`/Users//${LOGIN}`, {
      schemas: [USER_SCHEMA],
      userName: `${LOGIN}@example.com`,
    });
    expect(put.status).toBe(404);
    expect((await bridge.requestLines()).length).toBeGreaterThanOrEqual(3);
    expect(bridge.lines.filter((l) => l.includes(LOGIN))).toEqual([]);
  });
});

describe("debug request lines, whatever the query", () => {
  const LOGIN = "jane.doe-rvwf";
  const EMAIL = `${LOGIN}@example.com`;
  const bridge = bridgeLoggingAt("request-logger-query-values", "debug");

  it("hold no login", async () => {
    const okta = bridge.scim();
    const queries = [
      `filter=${encodeURIComponent(LOGIN)}`,
      `filter=${encodeURIComponent(`userName == ${LOGIN}`)}`,
      `filter=${encodeURIComponent(`userName = ${LOGIN}`)}`,
      `attributes=${encodeURIComponent(EMAIL)}`,
      `sortBy=${encodeURIComponent(EMAIL)}`,
    ];
    for (const q of queries) await okta.get(`/Users?${q}`);
    expect((await bridge.requestLines()).length).toBeGreaterThanOrEqual(queries.length);
    expect(bridge.lines.filter((l) => l.includes(LOGIN))).toEqual([]);
  });
});
