/**
 * Replays request sequences of JumpCloud, PingFederate, Keycloak and Google Workspace (fixtures in
 * test/fixtures/acceptance/replays, written from the providers' public documentation) against the
 * SCIM routes over a real Redis. Same step format as test/conformance/idp-replay.test.ts.
 */
import { readFileSync, readdirSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ScimTestApp, createScimTestApp } from "../helpers/scim-test-app.js";

interface Step {
  name: string;
  method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE";
  path: string;
  body?: unknown;
  expect: {
    status?: number;
    statusIn?: number[];
    body?: unknown;
    absent?: string[];
    absentInFirstResource?: string[];
    members?: string[];
  };
  capture?: Record<string, string>;
}

const dir = fileURLToPath(new URL("../fixtures/acceptance/replays/", import.meta.url));
const fixtures = readdirSync(dir).filter((f) => f.endsWith(".json"));
const TOKEN = "replay-token";

function substitute<T>(value: T, vars: Record<string, string>): T {
  const text = JSON.stringify(value).replace(/\$\{(\w+)\}/g, (m, name: string) => vars[name] ?? m);
  return JSON.parse(text) as T;
}

it("has replays to run", () => {
  expect(fixtures.length).toBeGreaterThanOrEqual(3);
});

for (const file of fixtures) {
  const fixture = JSON.parse(readFileSync(`${dir}${file}`, "utf8")) as { description: string; steps: Step[] };
  describe(`${file}: ${fixture.description.slice(0, 80)}`, () => {
    const vars: Record<string, string> = {};
    let t: ScimTestApp;
    beforeAll(async () => {
      t = await createScimTestApp(`acceptance-replay-${file.replace(/\W/g, "")}`, {
        sources: { idp: { tokens: [TOKEN] } },
      });
    });
    afterAll(async () => {
      await t.close();
    });
    for (const raw of fixture.steps) {
      it(raw.name, async () => {
        const step = substitute(raw, vars);
        const url = `/scim/v2/idp${step.path}`;
        let req = t.request[step.method.toLowerCase() as "get"](url).set("Authorization", `Bearer ${TOKEN}`);
        if (step.body !== undefined)
          req = req.set("Content-Type", "application/scim+json").send(JSON.stringify(step.body));
        const res = await req;
        if (step.expect.status !== undefined)
          expect(res.status, JSON.stringify(res.body)).toBe(step.expect.status);
        if (step.expect.statusIn)
          expect(step.expect.statusIn, JSON.stringify(res.body)).toContain(res.status);
        if (step.expect.body !== undefined) expect(res.body).toMatchObject(step.expect.body as object);
        for (const attr of step.expect.absent ?? []) expect(res.body).not.toHaveProperty([attr]);
        for (const attr of step.expect.absentInFirstResource ?? [])
          expect(res.body.Resources[0]).not.toHaveProperty([attr]);
        if (step.expect.members) {
          const got = ((res.body.members ?? []) as Array<{ value: string }>).map((m) => m.value).sort();
          expect(got).toEqual([...step.expect.members].sort());
        }
        for (const [name, attr] of Object.entries(step.capture ?? {})) vars[name] = String(res.body[attr]);
      });
    }
  });
}
