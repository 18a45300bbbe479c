// Copies the non-TypeScript files the compiled code reads at run time into dist/, and makes the
// CLI entry point executable: npx links `scim-bridge` to it, and only chmods it when it links (a
// rebuilt file behind an npx link made earlier would answer "Permission denied").
import { chmodSync, copyFileSync, mkdirSync } from "node:fs";

const assets = ["src/platform/contract/platform-api.yaml"];
for (const file of assets) {
  mkdirSync(`dist/${file.slice(0, file.lastIndexOf("/"))}`, { recursive: true });
  copyFileSync(file, `dist/${file}`);
}
chmodSync("dist/src/cli/main.js", 0o755);
