/**
 * recordFailure (jobs/job-lease.ts): a run's or resync's failure is told at error level once its
 * record is written; a write refused because the job was handed on (OperationNotHeld) tells nothing;
 * a write that fails for any other reason (Redis down) must still tell the failure (a human must
 * act: the run's record may stay `running`), then throw.
 */
import { describe, expect, it } from "vitest";
import { recordFailure } from "../../../jobs/job-lease.js";
import { OperationNotHeld } from "../../../src/admin/operation-not-held.js";

describe("recordFailure", () => {
  it("tells the failure once its record is written, and answers the write's result", async () => {
    let told = 0;
    await expect(
      recordFailure(
        async () => true,
        () => told++,
      ),
    ).resolves.toBe(true);
    expect(told).toBe(1);
  });

  it("tells nothing when the write is refused because the job was handed on", async () => {
    let told = 0;
    const refused = new OperationNotHeld("run-1");
    await expect(
      recordFailure(
        async () => {
          throw refused;
        },
        () => told++,
      ),
    ).rejects.toBe(refused);
    expect(told).toBe(0);
  });

  it("still tells the failure when the write fails otherwise (Redis down), then throws that", async () => {
    let told = 0;
    const down = new Error("Connection is closed.");
    await expect(
      recordFailure(
        async () => {
          throw down;
        },
        () => told++,
      ),
    ).rejects.toBe(down);
    expect(told).toBe(1);
  });
});
