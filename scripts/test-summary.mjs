// Prints vitest's JSON report as the one closing line CI reads: "N passed, N failed, N skipped".
import { readFileSync } from "node:fs";

const file = process.argv[2] ?? ".ci/vitest.json";
let report;
try {
  report = JSON.parse(readFileSync(file, "utf8"));
} catch (err) {
  console.log(`test-summary: no readable report at ${file}: ${err.message}`);
  console.log("0 passed, 1 failed");
  process.exit(1);
}
const passed = report.numPassedTests ?? 0;
// A file that fails to load counts as a failure even though no test in it ran.
const brokenFiles = (report.testResults ?? []).filter((f) => f.status === "failed" && (f.assertionResults ?? []).length === 0).length;
const failed = (report.numFailedTests ?? 0) + brokenFiles;
const skipped = (report.numPendingTests ?? 0) + (report.numTodoTests ?? 0);
console.log(`${passed} passed, ${failed} failed, ${skipped} skipped`);
process.exit(failed > 0 || passed === 0 ? 1 : 0);
