import { describe, expect, it } from "vitest";
import { partialCallDueAt } from "../../../src/sync/lifecycle-flusher.js";

const WINDOW = 200;
const MAX_WAIT = 1_000;

describe("partialCallDueAt: when a bulk call of fewer than 100 ids goes", () => {
  it("a lone change waits one window for company", () => {
    expect(partialCallDueAt([1_000], 1_000, WINDOW, MAX_WAIT)).toBe(1_200);
  });

  it("a fast stream keeps the call open (up to the max wait) so it fills", () => {
    // 50 changes in 50 ms: 1 per ms, far more than a batch by the deadline
    const sinces = Array.from({ length: 50 }, (_, i) => 1_000 + i);
    expect(partialCallDueAt(sinces, 1_050, WINDOW, MAX_WAIT)).toBe(1_049 + WINDOW);
    // still arriving at the deadline: the max wait caps it
    const long = Array.from({ length: 99 }, (_, i) => 1_000 + i * 10);
    expect(partialCallDueAt(long, 1_980, WINDOW, MAX_WAIT)).toBe(2_000);
  });

  it("a slow stream that cannot fill half a call goes one window after its oldest change", () => {
    // 40 changes a second (one every 25 ms): about 40 by the deadline, under half of 100
    const sinces = Array.from({ length: 5 }, (_, i) => 1_000 + i * 25);
    expect(partialCallDueAt(sinces, 1_100, WINDOW, MAX_WAIT)).toBe(1_000 + WINDOW);
  });

  it("a stream that will reach half a call keeps waiting (few, fuller calls)", () => {
    // 100 changes a second: about 100 by the deadline
    const sinces = Array.from({ length: 10 }, (_, i) => 1_000 + i * 10);
    expect(partialCallDueAt(sinces, 1_090, WINDOW, MAX_WAIT)).toBe(1_090 + WINDOW);
  });
});
