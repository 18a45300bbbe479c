/**
 * findGroupByDisplayName walks the filtered list until the group of exactly that name: the contract
 * allows a server page limit below `count` (RFC 7644 §3.4.2.4) and groups whose displayNames differ
 * only in case (POST /Groups: "409 uniqueness when displayName is taken" says nothing of case), both
 * found by `displayName eq` (RFC 7643 Group.displayName is caseExact false). **Was a bug** (found in
 * review round r): one page of 2 was asked, and with no exact match on it, its first resource was
 * taken: "Eng" answered for "eng", and the sync adopted (claimed, renamed, re-membered) another
 * group. And a resource of another name altogether (a platform or proxy that ignored the filter) is
 * never the group: only a case variant is taken when no name is exact, and the walk stops after 100
 * resources.
 */
import { afterEach, describe, expect, it } from "vitest";
import { HttpPlatformClient } from "../../../src/platform/client/http-platform-client.js";
import { NoopRequestBudget } from "../../../src/platform/client/request-budget.js";
import { type FakePlatform, sendJson, startFakePlatform } from "./fake-platform.js";

const GROUP = "urn:ietf:params:scim:schemas:core:2.0:Group";
const LIST = "urn:ietf:params:scim:api:messages:2.0:ListResponse";

let platform: FakePlatform | undefined;
const clients: HttpPlatformClient[] = [];

afterEach(async () => {
  for (const c of clients.splice(0)) c.close();
  await platform?.close();
  platform = undefined;
});

function clientFor(url: string): HttpPlatformClient {
  const client = new HttpPlatformClient({
    baseUrl: url,
    token: "t",
    allowInsecureHttp: true,
    timeoutMs: 2000,
    maxRetries: 1,
    budget: new NoopRequestBudget(),
    backoff: { baseMs: 10, capMs: 20 },
  });
  clients.push(client);
  return client;
}

/** A platform whose groups "Eng" (g1) and "eng" (g2) both match `displayName eq` and whose page limit is 1. */
function caseVariantsOnePerPage(): Promise<FakePlatform> {
  const groups = [
    { schemas: [GROUP], id: "g1", displayName: "Eng" },
    { schemas: [GROUP], id: "g2", displayName: "eng" },
  ];
  return startFakePlatform((req, res) => {
    const url = new URL(req.url, "http://x");
    const startIndex = Number(url.searchParams.get("startIndex") ?? 1);
    const page = groups.slice(startIndex - 1, startIndex); // server page limit: 1
    sendJson(
      res,
      200,
      {
        schemas: [LIST],
        totalResults: groups.length,
        startIndex,
        itemsPerPage: page.length,
        Resources: page,
      },
      { "content-type": "application/scim+json" },
    );
  });
}

describe("findGroupByDisplayName against a server page limit and case variants", () => {
  it("finds the group of exactly that name when it is on a later page of the filtered list", async () => {
    platform = await caseVariantsOnePerPage();
    const client = clientFor(platform.url);
    const found = await client.findGroupByDisplayName("eng");
    // The platform said totalResults 2: the exact "eng" is there, on startIndex 2.
    expect(found?.id).toBe("g2");
    expect(found?.displayName).toBe("eng");
  });
});

// Found in review round s (was a bug: the walk's first resource was the fallback, whatever its name).
describe("findGroupByDisplayName when the answer holds other names", () => {
  it("does not return a group whose name is not the one asked, even without case", async () => {
    const groups = Array.from({ length: 35 }, (_, i) => ({
      schemas: [GROUP],
      id: `g${i}`,
      displayName: `Team ${i}`,
    }));
    // The filter is ignored (a contract break, or a proxy that dropped the query's filter).
    platform = await startFakePlatform((req, res) => {
      const url = new URL(req.url, "http://x");
      const startIndex = Number(url.searchParams.get("startIndex") ?? 1);
      const count = Number(url.searchParams.get("count") ?? 100);
      const page = groups.slice(startIndex - 1, startIndex - 1 + count);
      sendJson(
        res,
        200,
        {
          schemas: [LIST],
          totalResults: groups.length,
          startIndex,
          itemsPerPage: page.length,
          Resources: page,
        },
        { "content-type": "application/scim+json" },
      );
    });
    const client = clientFor(platform.url);
    const found = await client.findGroupByDisplayName("eng");
    // "Team 0" is no case variant of "eng": adopting it claims another group.
    expect(found).toBeNull();
  });
});
