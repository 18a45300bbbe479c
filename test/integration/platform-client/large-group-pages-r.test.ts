/**
 * The contract sets no limit on a group's members, and a list of groups answers them in full
 * (platform-api.yaml: ScimGroup.members, ScimGroupList), while the client reads no answer larger
 * than its cap (16 MiB). A reconciliation lists groups with their members, 100 a page: a page of big
 * groups went over the cap and failed the run for good. A page too large to read is asked again,
 * smaller (halved, down to one resource), and the walk goes on with that size.
 */
import { afterEach, describe, expect, it } from "vitest";
import { HttpPlatformClient } from "../../../src/platform/client/http-platform-client.js";
import { NoopRequestBudget } from "../../../src/platform/client/request-budget.js";
import { type FakePlatform, sendJson, startFakePlatform } from "./fake-platform.js";

let platform: FakePlatform | undefined;
const clients: HttpPlatformClient[] = [];

afterEach(async () => {
  for (const c of clients.splice(0)) c.close();
  await platform?.close();
  platform = undefined;
});

const GROUP = "urn:ietf:params:scim:schemas:core:2.0:Group";
const LIST = "urn:ietf:params:scim:api:messages:2.0:ListResponse";
/** 30 groups of 200 members: about 12 KB each as JSON. */
const groups = Array.from({ length: 30 }, (_, g) => ({
  schemas: [GROUP],
  id: `g${g}`,
  displayName: `Group ${g}`,
  members: Array.from({ length: 200 }, (_, m) => ({ value: `user-${g}-${m}`, display: `member ${m}` })),
}));

function listing(): Promise<FakePlatform> {
  return startFakePlatform((req, res) => {
    const url = new URL(req.url, "http://x");
    const startIndex = Number(url.searchParams.get("startIndex") ?? 1);
    const count = Number(url.searchParams.get("count") ?? 100);
    const page = groups.slice(startIndex - 1, startIndex - 1 + count);
    sendJson(res, 200, {
      schemas: [LIST],
      totalResults: groups.length,
      startIndex,
      itemsPerPage: page.length,
      Resources: page,
    });
  });
}

function clientFor(url: string, maxAnswerBytes: number): HttpPlatformClient {
  const client = new HttpPlatformClient({
    baseUrl: url,
    token: "t",
    allowInsecureHttp: true,
    timeoutMs: 2000,
    maxRetries: 1,
    budget: new NoopRequestBudget(),
    backoff: { baseMs: 10, capMs: 20 },
    maxAnswerBytes,
  });
  clients.push(client);
  return client;
}

async function collect<T>(iterable: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of iterable) out.push(item);
  return out;
}

describe("a list page too large to read", () => {
  it("is asked again smaller, and every group is listed with its members", async () => {
    platform = await listing();
    // 100 KB: a page of 8 groups fits (about 97 KB), 16 do not.
    const client = clientFor(platform.url, 100_000);
    const listed = await collect(client.listGroups());
    expect(listed.map((g) => g.id)).toEqual(groups.map((g) => g.id));
    expect(listed.every((g) => (g.members as unknown[] | undefined)?.length === 200)).toBe(true);
    const asked = platform.requests.map((r) => {
      const url = new URL(r.url, "http://x");
      return `${url.searchParams.get("startIndex")}+${url.searchParams.get("count")}`;
    });
    // 100, 50, 25, 13 and 7 too large... then pages of the size that fitted.
    expect(asked.slice(0, 5)).toEqual(["1+100", "1+50", "1+25", "1+13", "1+7"]);
    expect(new Set(asked.slice(4).map((a) => a.split("+")[1]))).toEqual(new Set(["7"]));
  });

  it("still fails, naming the size, when one resource alone is over the cap", async () => {
    platform = await listing();
    const client = clientFor(platform.url, 5_000);
    await expect(collect(client.listGroups())).rejects.toThrow(
      /listGroups: answer body larger than 5000 bytes/,
    );
  });
});
