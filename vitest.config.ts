import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // Integration and e2e files share one real Redis; each file uses its own key prefix.
    fileParallelism: true,
    // Three on two cores: most files spend their time waiting (BullMQ locks and stalls, retry
    // backoffs, the emulator's holds), so the cores sat 50-80% idle with two. Measured on one
    // machine: 1,415-1,578 s with two, 1,147 s with three (all passed), 1,041 s with four (two
    // timing-bound tests failed under the contention).
    maxWorkers: 3,
    pool: "forks",
  },
});
