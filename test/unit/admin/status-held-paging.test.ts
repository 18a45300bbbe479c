/**
 * GET /status reads every stored run page by page (newest first) to list the held ones. The list
 * changes while it is read: a run started between two pages pushes the rest one place later (the
 * held run at a page's end is read twice: listed once), and finished runs trimmed from the middle
 * pull the rest earlier (the held run at the next page's start would fall between the pages: the
 * pages overlap).
 */
import { describe, expect, it } from "vitest";
import { AdminService } from "../../../src/admin/admin-service.js";

type Run = { runId: string; source: string; state: string };

function serviceOver(runs: Run[], betweenPages: (runs: Run[]) => void) {
  let reads = 0;
  const list = async ({ offset, limit }: { offset: number; limit: number }) => {
    if (reads++ === 1) betweenPages(runs);
    return { total: runs.length, items: runs.slice(offset, offset + limit) };
  };
  return new AdminService({
    config: { sources: {} },
    directory: {},
    syncState: { countDeadLetters: async () => 0 },
    jobs: { pending: async () => 0, queueCounts: async () => ({}) },
    runs: { list },
    resyncs: { list: async () => ({ total: 0, items: [] }) },
    audit: {},
  } as never);
}

const finished = (n: number, stem: string): Run[] =>
  Array.from({ length: n }, (_, i) => ({ runId: `${stem}-${i}`, source: "okta", state: "succeeded" }));
const held: Run = { runId: "held", source: "okta", state: "awaiting-confirmation" };

describe("GET /status: held runs while the runs change under the reading", () => {
  it("a run started between two pages: the held run at the first page's end is listed once", async () => {
    const runs = [...finished(499, "a"), held, ...finished(100, "b")];
    const service = serviceOver(runs, (r) => r.unshift({ runId: "new", source: "okta", state: "running" }));
    const status = await service.status();
    expect(status.awaitingConfirmation.map((op) => op.id)).toEqual(["held"]);
  });

  it("runs trimmed from the middle between two pages: the held run at the next page's start is listed", async () => {
    const runs = [...finished(505, "a"), held, ...finished(100, "b")];
    const service = serviceOver(runs, (r) => r.splice(100, 10));
    const status = await service.status();
    expect(status.awaitingConfirmation.map((op) => op.id)).toEqual(["held"]);
  });
});
