/**
 * A sync's own call answered 429 and swallowed: the best-effort label PUT of an attribute rule
 * (AttributeDefinitions.relabel). The pause that answer set holds back the sync's next call (the
 * value's write). Found in review (round q): that put-back was taken for one held back by another
 * call's pause (PlatformError.heldBack) and not counted towards maxRateLimitLoops, and the label
 * was asked again at every run, so a platform that keeps answering the label's PUT with 429 (a
 * quota on definition changes) put the job back for ever: never a dead letter, the user's value
 * never written. Now the label rests after such an answer, the value is written, and a put-back
 * after the job's own 429 counts (request-budget.test.ts has the client's side of it).
 */
import { Redis } from "ioredis";
import { afterEach, describe, expect, it } from "vitest";
import { RedisRequestBudget } from "../../../src/platform/client/request-budget.js";
import type { EntityRef } from "../../../src/scim/scim-types.js";
import { TEST_REDIS_URL, testPrefix, waitFor } from "../../helpers/redis-test-prefix.js";
import { type JobsHarness, startJobsHarness } from "./jobs-harness.js";

const ENT = "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User";

describe("a label PUT the platform keeps answering with 429", () => {
  let h: JobsHarness | undefined;
  let budgetRedis: Redis | undefined;
  afterEach(async () => {
    await h?.close();
    h = undefined;
    await budgetRedis?.quit();
    budgetRedis = undefined;
  });

  it("rests the label and writes the user's value: no put-back loop, no dead letter", async () => {
    const name = "label-rate-limited-q";
    budgetRedis = new Redis(TEST_REDIS_URL);
    const budget = new RedisRequestBudget({
      redis: budgetRedis,
      prefix: testPrefix(name),
      requestsPerSecond: 1_000,
      maxPollMs: 50,
    });
    h = await startJobsHarness(name, {
      sources: {
        okta: {
          tokens: ["t"],
          attributes: {
            department: { from: `${ENT}:department`, type: "string", displayName: "Department" },
          },
        },
      },
      sync: { attempts: 1 },
      tuning: { maxRateLimitLoops: 2 },
      // The client does not sit out a Retry-After of 1 s in a call (production: 60 s vs minutes).
      maxRetryAfterMs: 100,
      budget,
    });
    // The definition exists with another label: the sync PUTs the rule's label before the value.
    h.emulator.seed({ attributes: [{ name: "department", type: "string", displayName: "Dept" }] });
    // The platform keeps answering that PUT (this entity's own call) with 429, Retry-After 1 s.
    h.emulator.addFault({
      type: "error",
      status: 429,
      retryAfterSeconds: 1,
      match: { operation: "updateUserAttribute" },
    });
    const u = await h.directory.createUser(
      "okta",
      h.user("label@example.com", { [ENT]: { department: "R&D" } }),
    );
    const ref: EntityRef = { source: "okta", kind: "user", id: u.resource.id };

    await waitFor(async () => (await h!.state.getStatus(ref))?.state === "synced", {
      timeoutMs: 10_000,
      what: "the user synced",
    });
    const platform = h.emulator.state();
    const userId = platform.users.find((x) => x["userName"] === "label@example.com")?.id;
    expect(platform.attributeValues.find((v) => v.userId === userId && v.name === "department")?.value).toBe(
      "R&D",
    );
    // Asked once: the label rests (RELABEL_REST_MS) after the 429 instead of meeting it at every run.
    expect(h.emulator.count("updateUserAttribute")).toBe(1);
    expect(platform.attributes.find((a) => a.name === "department")?.displayName).toBe("Dept");
  }, 15_000);
});
