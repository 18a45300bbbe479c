import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { planGroup } from "../../../src/mapping/plan-group.js";
import { HttpPlatformClient } from "../../../src/platform/client/http-platform-client.js";
import { NoopRequestBudget } from "../../../src/platform/client/request-budget.js";
import { createPlatformEmulator } from "../../../src/platform/emulator/platform-emulator.js";
import { AttributeDefinitions } from "../../../src/sync/attribute-definitions.js";

const USER_SCHEMA = "urn:ietf:params:scim:schemas:core:2.0:User";
const LIST_SCHEMA = "urn:ietf:params:scim:api:messages:2.0:ListResponse";

/**
 * A platform that caps its SCIM pages below the requested count, as RFC 7644 §3.4.2.4 lets a
 * service provider do ("itemsPerPage" is what it returned; "totalResults" says how many match).
 */
async function startCappedPlatform(total: number, cap: number): Promise<{ server: Server; url: string }> {
  const users = Array.from({ length: total }, (_, i) => ({
    schemas: [USER_SCHEMA],
    id: `u${i}`,
    userName: `user${i}@example.test`,
    active: true,
  }));
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://x");
    if (req.headers.authorization !== "Bearer t" || url.pathname !== "/api/scim/v2/Users") {
      res.writeHead(404).end();
      return;
    }
    const startIndex = Number(url.searchParams.get("startIndex") ?? "1");
    const count = Math.min(cap, Number(url.searchParams.get("count") ?? "100"));
    const page = users.slice(startIndex - 1, startIndex - 1 + count);
    res.writeHead(200, { "content-type": "application/scim+json" });
    res.end(
      JSON.stringify({
        schemas: [LIST_SCHEMA],
        totalResults: users.length,
        startIndex,
        itemsPerPage: page.length,
        Resources: page,
      }),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return { server, url: `http://127.0.0.1:${port}` };
}

describe("probes-b: platform listings", () => {
  let server: Server | undefined;
  let client: HttpPlatformClient | undefined;
  afterEach(async () => {
    client?.close();
    await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
    server = undefined;
  });

  it("walks every SCIM page when the platform answers fewer items than asked but totalResults says more", async () => {
    const platform = await startCappedPlatform(7, 2);
    server = platform.server;
    client = new HttpPlatformClient({
      baseUrl: platform.url,
      token: "t",
      allowInsecureHttp: true,
      timeoutMs: 2000,
      maxRetries: 0,
      budget: new NoopRequestBudget(),
    });
    const seen: string[] = [];
    for await (const user of client.listUsers()) seen.push(user.id);
    expect(seen).toEqual(["u0", "u1", "u2", "u3", "u4", "u5", "u6"]);
  });
});

describe("probes-b: attribute definitions", () => {
  it("uses the platform's definition whose name differs only in case (the platform's names are unique case-insensitively)", async () => {
    const emulator = createPlatformEmulator({ token: "t", seed: 1 });
    const url = await emulator.start({ port: 0 });
    const client = new HttpPlatformClient({
      baseUrl: url,
      token: "t",
      allowInsecureHttp: true,
      timeoutMs: 2000,
      maxRetries: 0,
      budget: new NoopRequestBudget(),
    });
    try {
      const existing = await client.createUserAttribute({ name: "department", type: "string" });
      const defs = new AttributeDefinitions(client);
      await expect(defs.ensure("Department", "string")).resolves.toBe(existing.id);
      // A clash of type is still a visible, permanent error.
      await expect(new AttributeDefinitions(client).ensure("DEPARTMENT", "number")).rejects.toMatchObject({
        code: "attribute_type_clash",
      });
    } finally {
      client.close();
      await emulator.close();
    }
  });
});

describe("probes-b: group renamed while its create is in doubt", () => {
  it("looks for the lost create under the old name even when only the case changed", () => {
    // The contract makes userName unique case-insensitively but says nothing of the kind for a
    // group's displayName: a platform that keeps "Eng" and "eng" apart would be left with the
    // lost "Eng" (never owned, never removed) if "eng" were simply created.
    expect(
      planGroup({
        desiredName: "eng",
        desiredMembers: [],
        applied: { pendingDisplayName: "Eng", members: [] },
      }).steps,
    ).toEqual([{ type: "findLostGroup", displayName: "Eng" }]);
  });
});
