import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

export interface ScimFixture {
  _source: string;
  method: string;
  path: string;
  // biome-ignore lint/suspicious/noExplicitAny: fixtures are arbitrary JSON request bodies
  body: any;
}

/** Reads a recorded request from test/fixtures/scim/<name>.json (e.g. "okta/deactivate-user"). */
export function loadFixture(name: string): ScimFixture {
  const url = new URL(`../../fixtures/scim/${name}.json`, import.meta.url);
  return JSON.parse(readFileSync(fileURLToPath(url), "utf8")) as ScimFixture;
}
