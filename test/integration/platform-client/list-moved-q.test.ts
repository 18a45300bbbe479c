/**
 * Found in review (round q; commits 380d631, c84d47b): scimPages takes a page whose first
 * resource's id was the first of an earlier page for a platform that ignores startIndex, and fails
 * the walk as a permanent contract break. But a platform that honours startIndex and lists newest
 * first (the emulator's `order: "reverse"`, an answer the contract allows: it sets no order) shifts
 * every resource one place on at each create; a listing (listUsers, pageSize 100) that meets
 * exactly a page's worth of creates between two pages is answered a page that starts where an
 * earlier one did. Its totalResults changed meanwhile: that is a list that moved, read again later
 * (transient, `platform_failures_total` class transient), not a broken contract. A platform that
 * ignores startIndex still fails for good (answers-contract-r.test.ts).
 */
import { Registry } from "prom-client";
import { afterEach, describe, expect, it } from "vitest";
import { HttpPlatformClient } from "../../../src/platform/client/http-platform-client.js";
import { PlatformError } from "../../../src/platform/platform-error.js";
import { NoopRequestBudget } from "../../../src/platform/client/request-budget.js";
import { createPlatformEmulator } from "../../../src/platform/emulator/platform-emulator.js";

const TOKEN = "t";

describe("a SCIM list walk over a newest-first list that grows during the walk", () => {
  const closers: Array<() => unknown> = [];
  afterEach(async () => {
    for (const close of closers.splice(0)) await close();
  });

  it("fails as a list that moved (transient), not as a platform that ignores startIndex", async () => {
    const emulator = createPlatformEmulator({ token: TOKEN, seed: 7, variations: { order: "reverse" } });
    const url = await emulator.start({ port: 0 });
    closers.push(() => emulator.close());
    emulator.seed({ users: Array.from({ length: 150 }, (_, i) => ({ userName: `old${i}@example.com` })) });
    const registry = new Registry();
    const client = new HttpPlatformClient({
      registry,
      baseUrl: url,
      token: TOKEN,
      allowInsecureHttp: true,
      timeoutMs: 2000,
      maxRetries: 1,
      budget: new NoopRequestBudget(),
      backoff: { baseMs: 5, capMs: 10 },
    });
    closers.push(() => client.close());

    const seen: string[] = [];
    let error: unknown;
    try {
      for await (const user of client.listUsers({ pageSize: 100 })) {
        seen.push(user.id);
        // While the walk reads its first page, the sync workers create 100 users (one page's worth).
        if (seen.length === 100) {
          emulator.seed({
            users: Array.from({ length: 100 }, (_, i) => ({ userName: `new${i}@example.com` })),
          });
        }
      }
    } catch (err) {
      error = err;
    }
    expect(seen).toHaveLength(100);
    expect(error).toBeInstanceOf(PlatformError);
    expect(error).toMatchObject({ failure: "invalid_response", transient: true, operation: "listUsers" });
    expect(String((error as Error).message)).toContain(
      "the list changed while it was read (totalResults 150 at page 1, 250 now)",
    );
    const failures = await registry.getSingleMetricAsString("platform_failures_total");
    expect(failures).toMatch(
      /operation="listUsers".*class="transient"|class="transient".*operation="listUsers"/,
    );
    expect(failures).not.toMatch(/class="permanent"/);
  });
});
