import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // Integration and e2e files share one real Redis; each file uses its own key prefix.
    fileParallelism: true,
    maxWorkers: 2,
    pool: "forks",
  },
});
