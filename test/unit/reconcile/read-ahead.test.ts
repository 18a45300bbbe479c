import { describe, expect, it } from "vitest";
import { batches, readAhead } from "../../../jobs/reconcile/run-context.js";

async function* numbers(n: number, log: string[]): AsyncIterable<number> {
  for (let i = 0; i < n; i++) {
    log.push(`read ${i}`);
    yield i;
  }
}

async function collect<T>(items: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of items) out.push(item);
  return out;
}

describe("batches", () => {
  it("groups a stream into arrays, the last one shorter", async () => {
    expect(await collect(batches(numbers(5, []), 2))).toEqual([[0, 1], [2, 3], [4]]);
    expect(await collect(batches(numbers(0, []), 2))).toEqual([]);
  });
});

describe("readAhead", () => {
  it("yields every item in order, having started reading the next one", async () => {
    const log: string[] = [];
    for await (const item of readAhead(numbers(3, log))) {
      log.push(`use ${item}`);
    }
    expect(log).toEqual(["read 0", "read 1", "use 0", "read 2", "use 1", "use 2"]);
  });

  it("passes a failure of the source on to the consumer", async () => {
    async function* failing(): AsyncIterable<number> {
      yield 1;
      throw new Error("platform down");
    }
    await expect(collect(readAhead(failing()))).rejects.toThrow("platform down");
  });
});
