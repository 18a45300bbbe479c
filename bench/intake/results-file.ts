import { existsSync, readFileSync, writeFileSync } from "node:fs";

const BEGIN = "<!-- intake:begin (written by bench/intake.ts) -->";
const END = "<!-- intake:end -->";

const SKELETON = `# Benchmark results

Figures recorded by the benchmarks in \`bench/\`. Each section is written by its own benchmark.

## Intake

${BEGIN}
${END}

## Sync

## Reconcile
`;

/** Replaces the intake section's body in RESULTS.md (creating the file, or the section, when absent). */
export function writeIntakeSection(path: string, body: string): void {
  let text = existsSync(path) ? readFileSync(path, "utf8") : SKELETON;
  if (!text.includes(BEGIN) || !text.includes(END)) {
    text = `${text.trimEnd()}\n\n## Intake\n\n${BEGIN}\n${END}\n`;
  }
  const start = text.indexOf(BEGIN) + BEGIN.length;
  const end = text.indexOf(END);
  writeFileSync(path, `${text.slice(0, start)}\n${body.trim()}\n${text.slice(end)}`);
}
