// Copies the non-TypeScript files the compiled code reads at run time into dist/.
import { copyFileSync, mkdirSync } from "node:fs";

const assets = ["src/platform/contract/platform-api.yaml"];
for (const file of assets) {
  mkdirSync(`dist/${file.slice(0, file.lastIndexOf("/"))}`, { recursive: true });
  copyFileSync(file, `dist/${file}`);
}
