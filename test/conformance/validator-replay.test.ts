/**
 * Replays identity-provider traffic with its headers (fixtures in test/fixtures/conformance/headers/:
 * Okta's SCIM 2.0 spec test as its Runscope suite sends it, Microsoft's SCIM Validator with the
 * aadOptscim062020 tenant URL flag, OneLogin, Keycloak and JumpCloud group traffic, and the RFC's
 * own examples) against the SCIM routes over a real Redis. Unlike the runner of idp-replay.test.ts,
 * each step also sends headers and asserts the answer's headers, and every answer is held to the
 * rules RFC 7644 gives all of them:
 * - a body is `application/scim+json` (§3.1, §8.1);
 * - an answer that carries one resource has `ETag` = `meta.version` (§3.14) and `Location` =
 *   `meta.location` (§3.3 for a create; the examples of §3.4.1, §3.5.1 for GET and PUT);
 * - an error body has the Error schema and `status` as a string (§3.12).
 *
 * Step format: {name, method, path, headers?, body?, expect: {status, headers?, body?, absent?,
 * members?, noBody?}, capture?}. An expected header value is a string (exact), `{"matches": re}`,
 * or null (absent). `${var}` anywhere in a step is a value captured earlier: `capture` maps a name
 * to a body path (`id`, `Resources.0.id`) or to `header:<name>`.
 */
import { readFileSync, readdirSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ENTRA_TOKEN, OKTA_TOKEN, type ScimTestApp, createScimTestApp } from "../helpers/scim-test-app.js";

const ERROR_SCHEMA = "urn:ietf:params:scim:api:messages:2.0:Error";
const HOST = "scim-bridge.example.test";
const DIR = new URL("../fixtures/conformance/headers/", import.meta.url);

type HeaderExpectation = string | { matches: string } | null;

interface Step {
  name: string;
  method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE" | "HEAD";
  path: string;
  headers?: Record<string, string>;
  body?: unknown;
  expect: {
    status: number;
    headers?: Record<string, HeaderExpectation>;
    body?: unknown;
    absent?: string[];
    members?: string[];
    noBody?: boolean;
  };
  capture?: Record<string, string>;
}

interface Fixture {
  description: string;
  steps: Step[];
}

function substitute<T>(value: T, vars: Record<string, string>): T {
  const text = JSON.stringify(value).replace(/\$\{(\w+)\}/g, (m, name: string) => vars[name] ?? m);
  return JSON.parse(text) as T;
}

function valueAt(body: unknown, path: string): unknown {
  return path.split(".").reduce<unknown>((v, key) => (v as Record<string, unknown> | undefined)?.[key], body);
}

/** What RFC 7644 asks of every answer, whatever the step expects besides. */
function checkRfcInvariants(status: number, headers: Record<string, string>, body: unknown, text: string) {
  if (text.length > 0) expect(headers["content-type"]).toMatch(/^application\/scim\+json/);
  const meta = (body as { meta?: { version?: string; location?: string } } | undefined)?.meta;
  if (status === 201) {
    // A create always says where the resource is (§3.3), also when `attributes` projects meta away.
    expect(headers.location, "Location of a create").toMatch(/^https?:\/\//);
    expect(headers.etag, "ETag of a create").toMatch(/^W\/"/);
  }
  if ((status === 200 || status === 201) && meta?.location !== undefined && meta.version !== undefined) {
    expect(headers.etag, "ETag of a resource answer").toBe(meta.version);
    expect(headers.location, "Location of a resource answer").toBe(meta.location);
  }
  if (status >= 400) {
    expect(body).toMatchObject({ schemas: [ERROR_SCHEMA], status: String(status) });
    expect(typeof (body as { detail?: unknown }).detail).toBe("string");
  }
}

const files = readdirSync(fileURLToPath(DIR)).filter((f) => f.endsWith(".json"));

for (const file of files) {
  const fixture = JSON.parse(readFileSync(fileURLToPath(new URL(file, DIR)), "utf8")) as Fixture;
  const source = file.startsWith("entra") ? "entra" : "okta";
  const token = source === "entra" ? ENTRA_TOKEN : OKTA_TOKEN;

  describe(`${file}: ${fixture.description.slice(0, 80)}`, () => {
    const vars: Record<string, string> = {};
    let t: ScimTestApp;
    beforeAll(async () => {
      t = await createScimTestApp(`headers-${file.replace(/\W/g, "")}`);
    });
    afterAll(async () => {
      await t.close();
    });

    for (const raw of fixture.steps) {
      it(raw.name, async () => {
        const step = substitute(raw, vars);
        const method = step.method.toLowerCase() as "get";
        // One host name for the whole replay, as an IdP calls the tenant URL it was given (supertest
        // would otherwise answer each request on a port of its own, and Locations would differ).
        let req = t.request[method](`/scim/v2/${source}${step.path}`)
          .set("Host", HOST)
          .set("Authorization", `Bearer ${token}`);
        for (const [name, value] of Object.entries(step.headers ?? {})) req = req.set(name, value);
        if (step.body !== undefined) {
          if (step.headers?.["Content-Type"] === undefined)
            req = req.set("Content-Type", "application/scim+json");
          req = req.send(JSON.stringify(step.body));
        }
        const res = await req;
        const text = res.text ?? "";
        const body: unknown = text.length > 0 ? JSON.parse(text) : undefined;
        const headers = res.headers as Record<string, string>;
        expect(res.status, text).toBe(step.expect.status);
        checkRfcInvariants(res.status, headers, body, text);
        for (const [name, want] of Object.entries(step.expect.headers ?? {})) {
          const got = headers[name.toLowerCase()];
          if (want === null) expect(got, name).toBeUndefined();
          else if (typeof want === "string") expect(got, name).toBe(want);
          else expect(got, name).toMatch(new RegExp(want.matches));
        }
        if (step.expect.noBody) expect(text).toBe("");
        if (step.expect.body !== undefined) expect(body).toMatchObject(step.expect.body as object);
        for (const attr of step.expect.absent ?? []) expect(body).not.toHaveProperty(attr.split("."));
        if (step.expect.members) {
          const got = ((body as { members?: Array<{ value: string }> }).members ?? []).map((m) => m.value);
          expect(got.sort()).toEqual([...step.expect.members].sort());
        }
        for (const [name, from] of Object.entries(step.capture ?? {})) {
          vars[name] = from.startsWith("header:")
            ? String(headers[from.slice("header:".length).toLowerCase()])
            : String(valueAt(body, from));
        }
      });
    }
  });
}

it("has header replays to run", () => {
  expect(files.length).toBeGreaterThanOrEqual(4);
});
