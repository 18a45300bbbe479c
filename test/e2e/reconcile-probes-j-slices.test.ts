/**
 * Probes-j (reconciliation of a large source with attribute rules): attribute values cost one
 * platform call per user, so a run reads them for one slice of the users, and successive runs walk
 * through the slices. A dry run must report what the next run applies: it reads the slice the next
 * run reads, and does not take a turn, or an operator's dry runs between scheduled runs would keep
 * the scheduled runs on the same slices and never repair the attribute values of the others.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SCHEMA_ENTERPRISE_USER } from "../../src/scim/scim-types.js";
import { USER_SCHEMA, type TestBridge, startTestBridge } from "../helpers/bridge-harness.js";
import { waitFor } from "../helpers/redis-test-prefix.js";

let h: TestBridge;

async function reconcile(dryRun: boolean) {
  const res = await h.admin().post("/sources/okta/reconcile", { dryRun });
  expect(res.status).toBe(202);
  return waitFor(
    async () => {
      const run = await h.admin().get(`/reconcile-runs/${res.body.runId}`);
      return ["queued", "running"].includes(run.body.state) ? null : run.body;
    },
    { what: "the run to settle", timeoutMs: 60_000 },
  );
}

beforeAll(async () => {
  h = await startTestBridge("reconcile-probes-j-slices", {
    sources: {
      okta: {
        tokens: ["okta-token"],
        attributes: { department: { from: `${SCHEMA_ENTERPRISE_USER}:department`, type: "string" } },
      },
    },
  });
  // More users than a run reads attribute values for (2000): two slices.
  for (let i = 0; i < 2001; i++) {
    await h.bridge.directory.createUser("okta", {
      schemas: [USER_SCHEMA, SCHEMA_ENTERPRISE_USER],
      userName: `slice.j${i}@example.com`,
      active: true,
      [SCHEMA_ENTERPRISE_USER]: { department: "R&D" },
    } as never);
  }
  await h.waitForIdle(120_000);
}, 180_000);
afterAll(async () => {
  await h?.close();
});

describe("attribute slices", () => {
  it("a dry run reads the slice the next run reads; dry runs between runs do not skip slices", async () => {
    const slices: number[] = [];
    for (const dryRun of [true, false, true, false, true, false]) {
      const run = await reconcile(dryRun);
      expect(run.state).toBe("succeeded");
      expect(run.attributeSlice.slices).toBe(2);
      slices.push(run.attributeSlice.slice);
    }
    // Each dry run shows the slice its next run then checks; the runs walk through both slices.
    expect(slices[0]).toBe(slices[1]);
    expect(slices[2]).toBe(slices[3]);
    expect(slices[4]).toBe(slices[5]);
    expect(new Set([slices[1], slices[3]])).toEqual(new Set([0, 1]));
  }, 120_000);
});
