/**
 * Replays request sequences of identity providers, written as JSON fixtures (one file a sequence),
 * against the SCIM routes over a real Redis. Each file runs against an empty directory of its own;
 * each step is one test. Step format: {name, method, path, body?, expect, capture?}; `${var}` in a
 * step is replaced by a value captured from an earlier answer.
 */
import { readFileSync, readdirSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ConfigInput } from "../../src/config/config-schema.js";
import { type ScimTestApp, createScimTestApp } from "./scim-test-app.js";

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

/** Which source a replay file talks to, with its token and any config it needs. */
export interface ReplayTarget {
  source: string;
  token: string;
  config?: Partial<ConfigInput>;
}

function substitute<T>(value: T, vars: Record<string, string>): T {
  const text = JSON.stringify(value).replace(/\$\{(\w+)\}/g, (m, name: string) => vars[name] ?? m);
  return JSON.parse(text) as T;
}

/** Registers one describe block per fixture file in `dir`; returns the files found. */
export function describeReplays(dir: URL, name: string, targetOf: (file: string) => ReplayTarget): string[] {
  const path = fileURLToPath(dir);
  const fixtures = readdirSync(path).filter((f) => f.endsWith(".json"));
  for (const file of fixtures) {
    const fixture = JSON.parse(readFileSync(`${path}${file}`, "utf8")) as {
      description: string;
      steps: Step[];
    };
    const target = targetOf(file);
    describe(`${file}: ${fixture.description.slice(0, 80)}`, () => {
      const vars: Record<string, string> = {};
      let t: ScimTestApp;
      beforeAll(async () => {
        t = await createScimTestApp(`${name}-${file.replace(/\W/g, "")}`, target.config);
      });
      afterAll(async () => {
        await t.close();
      });
      for (const raw of fixture.steps) {
        it(raw.name, async () => {
          const step = substitute(raw, vars);
          const url = `/scim/v2/${target.source}${step.path}`;
          let req = t.request[step.method.toLowerCase() as "get"](url).set(
            "Authorization",
            `Bearer ${target.token}`,
          );
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
          for (const [key, attr] of Object.entries(step.capture ?? {})) vars[key] = String(res.body[attr]);
        });
      }
    });
  }
  return fixtures;
}
