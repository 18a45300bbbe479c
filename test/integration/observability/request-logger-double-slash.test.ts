/**
 * The SCIM router serves runs of slashes after the source as one slash (routes/scim/scim-routes.ts
 * collapseSlashes), so `GET /scim/v2/okta/Users//jane.doe` is the same request as
 * `GET /scim/v2/okta/Users/jane.doe` (a 404 for a login put where the id goes). The request line
 * (info level, every request) hides that login either way: loggedPath reads the slashes as the
 * router does. **Was a bug** (found in review round r): the segment after the empty one was written
 * as it is.
 */
import { Writable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type TestBridge, startTestBridge } from "../../helpers/bridge-harness.js";

const LOGIN = "jane.doe-rvw";
const lines: string[] = [];
let h: TestBridge;

beforeAll(async () => {
  const sink = new Writable({
    write(chunk, _enc, done) {
      for (const line of chunk.toString().split("\n")) if (line.trim()) lines.push(line);
      done();
    },
  });
  h = await startTestBridge("request-logger-double-slash", {
    log: { level: "info", destination: sink },
    sources: { okta: { tokens: ["okta-token"] } },
  });
}, 60_000);
afterAll(async () => {
  await h?.close();
});

describe("a login where the id goes, after a double slash", () => {
  it("is served as /Users/<login> (404) and is not written to the request line", async () => {
    const okta = h.scim("okta");
    // The same answer as the single-slash form: the router collapses the slashes.
    const single = await okta.get(`/Users/${LOGIN}`);
    const double = await okta.get(`/Users//${LOGIN}`);
    expect(single.status).toBe(404);
    expect(double.status).toBe(404);
    const put = await okta.put(`/Users//${LOGIN}`, {
      schemas: ["urn:ietf:params:scim:schemas:core:2.0:User"],
      userName: `${LOGIN}@example.com`,
    });
    expect(put.status).toBe(404);
    await new Promise((r) => setTimeout(r, 100));
    const requestLines = lines.filter((l) => l.includes('"request completed"'));
    expect(requestLines.length).toBeGreaterThanOrEqual(3);
    const leaking = lines.filter((l) => l.includes(LOGIN));
    expect(leaking).toEqual([]);
  });
});
