/**
 * Answers the platform contract allows (platform-api.yaml) that the client must read as the
 * contract says, whatever our emulator does (review of the client against the contract):
 * - every request says it takes the answer unencoded (`Accept-Encoding: identity`), so a platform
 *   behind a compressing proxy does not send a gzip body the client would read as "not JSON";
 * - `PUT /Groups/{id}` answers `200 replaced` with no content: an empty 200 is the answer, not a
 *   lost one to send again;
 * - a SCIM error body whose `status` is a number (the contract says a string) still names its
 *   scimType and detail in the failure's message.
 */
import { Registry } from "prom-client";
import { afterEach, describe, expect, it } from "vitest";
import { HttpPlatformClient } from "../../../src/platform/client/http-platform-client.js";
import { NoopRequestBudget } from "../../../src/platform/client/request-budget.js";
import { PlatformError } from "../../../src/platform/platform-error.js";
import { type FakePlatform, scimUser, sendJson, startFakePlatform } from "./fake-platform.js";

let platform: FakePlatform | undefined;
const clients: HttpPlatformClient[] = [];

afterEach(async () => {
  for (const c of clients.splice(0)) c.close();
  await platform?.close();
  platform = undefined;
});

function clientFor(url: string, registry?: Registry): HttpPlatformClient {
  const client = new HttpPlatformClient({
    registry,
    baseUrl: url,
    token: "t",
    allowInsecureHttp: true,
    timeoutMs: 2000,
    maxRetries: 2,
    budget: new NoopRequestBudget(),
    backoff: { baseMs: 10, capMs: 20 },
  });
  clients.push(client);
  return client;
}

describe("the platform client reads answers as the contract gives them", () => {
  it("asks for unencoded answers on every call", async () => {
    platform = await startFakePlatform((req, res) => {
      if (req.method === "DELETE") {
        res.writeHead(204).end();
        return;
      }
      sendJson(res, req.method === "POST" ? 201 : 200, scimUser("u1", "ada"));
    });
    const client = clientFor(platform.url);
    await client.getUser("u1");
    await client.createUser({ schemas: ["urn:ietf:params:scim:schemas:core:2.0:User"], userName: "ada" });
    await client.deleteUser("u1");
    expect(platform.requests).toHaveLength(3);
    for (const req of platform.requests) expect(req.headers["accept-encoding"]).toBe("identity");
  });

  it("takes an empty 200 to PUT /Groups/{id} as done, sending it once", async () => {
    platform = await startFakePlatform((_req, res) => {
      res.writeHead(200).end();
    });
    const client = clientFor(platform.url);
    await expect(
      client.replaceGroup("g1", {
        schemas: ["urn:ietf:params:scim:schemas:core:2.0:Group"],
        displayName: "x",
      }),
    ).resolves.toBeUndefined();
    expect(platform.requests.map((r) => `${r.method} ${r.url}`)).toEqual(["PUT /api/scim/v2/Groups/g1"]);
  });

  it("names the scimType and detail of an error body whose status is a number", async () => {
    platform = await startFakePlatform((_req, res) =>
      sendJson(res, 400, {
        schemas: ["urn:ietf:params:scim:api:messages:2.0:Error"],
        status: 400,
        scimType: "invalidValue",
        detail: "userName is required",
      }),
    );
    const client = clientFor(platform.url);
    const err = await client
      .createUser({ schemas: ["urn:ietf:params:scim:schemas:core:2.0:User"], userName: "" })
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(err).toBeInstanceOf(PlatformError);
    expect((err as PlatformError).message).toContain("(invalidValue: userName is required)");
  });

  it("fails a cursor list that announces a next page without a cursor as the named call's contract break", async () => {
    platform = await startFakePlatform((_req, res) =>
      sendJson(res, 200, {
        items: [{ id: "g1", name: "Analysts" }],
        pageInfo: { hasNextPage: true, endCursor: null },
      }),
    );
    const registry = new Registry();
    const client = clientFor(platform.url, registry);
    const err = await (async () => {
      for await (const _group of client.listEmbedGroups("acme")) void _group;
    })().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(PlatformError);
    expect(err).toMatchObject({
      operation: "listEmbedGroups",
      code: "platform_invalid_response",
      transient: false,
    });
    expect(platform.requests).toHaveLength(1);
    // Counted where an operator's alert looks for permanent platform failures.
    const failures = await registry.getSingleMetric("platform_failures_total")?.get();
    expect(failures?.values).toEqual([
      expect.objectContaining({ labels: { operation: "listEmbedGroups", class: "permanent" }, value: 1 }),
    ]);
  });

  it("fails a SCIM list that ignores startIndex as the named call's contract break", async () => {
    platform = await startFakePlatform((_req, res) =>
      sendJson(res, 200, {
        schemas: ["urn:ietf:params:scim:api:messages:2.0:ListResponse"],
        Resources: [scimUser("u1", "ada")],
      }),
    );
    const client = clientFor(platform.url);
    const err = await (async () => {
      for await (const _user of client.listUsers()) void _user;
    })().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toMatchObject({
      operation: "listUsers",
      code: "platform_invalid_response",
      transient: false,
    });
  });
});
