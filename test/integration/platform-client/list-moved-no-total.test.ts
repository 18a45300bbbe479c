/**
 * ScimUserList.totalResults is optional (platform-api.yaml, components.schemas.ScimUserList: no
 * `required`), and the contract sets no list order. A platform that honours startIndex, lists newest
 * first and leaves totalResults out (the emulator's `order: "reverse"` and `sparse` variations, each
 * one the contract allows) answers a walk that met a page's worth of creates between two pages with
 * a page that starts where an earlier one did. The earlier page's startIndex, asked again, starts
 * with a new user: the list moved (transient, read again). **Was a bug** (found in review round r):
 * without a totalResults on both pages, that differed, the walk failed for good as a platform that
 * ignores startIndex, and a reconciliation of such a platform with it.
 */
import { afterEach, describe, expect, it } from "vitest";
import { HttpPlatformClient } from "../../../src/platform/client/http-platform-client.js";
import { NoopRequestBudget } from "../../../src/platform/client/request-budget.js";
import { createPlatformEmulator } from "../../../src/platform/emulator/platform-emulator.js";
import { PlatformError } from "../../../src/platform/platform-error.js";

const TOKEN = "t";

describe("a SCIM list walk over a newest-first list without totalResults that grows during the walk", () => {
  const closers: Array<() => unknown> = [];
  afterEach(async () => {
    for (const close of closers.splice(0)) await close();
  });

  it("fails as a list that moved (transient), not as a platform that ignores startIndex", async () => {
    const emulator = createPlatformEmulator({
      token: TOKEN,
      seed: 7,
      checkResponses: true,
      variations: { order: "reverse", sparse: true },
    });
    const url = await emulator.start({ port: 0 });
    closers.push(() => emulator.close());
    emulator.seed({ users: Array.from({ length: 150 }, (_, i) => ({ userName: `old${i}@example.com` })) });
    const client = new HttpPlatformClient({
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
        if (seen.length === 100) {
          emulator.seed({
            users: Array.from({ length: 100 }, (_, i) => ({ userName: `new${i}@example.com` })),
          });
        }
      }
    } catch (err) {
      error = err;
    }
    expect(emulator.violations()).toEqual([]);
    expect(seen).toHaveLength(100);
    expect(error).toBeInstanceOf(PlatformError);
    // The platform honours startIndex (startIndex=1 now starts with a new user): the list moved.
    expect(error).toMatchObject({ failure: "invalid_response", transient: true, operation: "listUsers" });
    expect(String((error as Error).message)).not.toContain("it ignores startIndex");
  });
});
