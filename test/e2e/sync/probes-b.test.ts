import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { startTestBridge, type TestBridge, PLATFORM_TOKEN } from "../../helpers/bridge-harness.js";
import { waitFor } from "../../helpers/redis-test-prefix.js";
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

/**
 * A proxy in front of the emulator that refuses, as RFC 7644 §3.5.2.2 lets a strict platform do
 * (400 noTarget), a PATCH removing a group member that is not in the group.
 */
type Intercept = (call: {
  method: string;
  path: string;
  body: Buffer;
  headers: Record<string, string>;
  target: string;
}) => Promise<{ status: number; body: unknown } | undefined>;

async function startNoTargetProxy(
  targetOf: () => string,
  intercept?: Intercept,
): Promise<{ server: Server; url: string; refused: number[] }> {
  const refused: number[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", async () => {
      const target = targetOf();
      const body = Buffer.concat(chunks);
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(req.headers)) {
        if (typeof v === "string" && k !== "host" && k !== "connection" && k !== "content-length")
          headers[k] = v;
      }
      const path = req.url ?? "/";
      const own = await intercept?.({ method: req.method ?? "GET", path, body, headers, target });
      if (own) {
        res.writeHead(own.status, { "content-type": "application/json" });
        res.end(JSON.stringify(own.body));
        return;
      }
      if (req.method === "PATCH" && /^\/api\/scim\/v2\/Groups\/[^/?]+$/.test(path)) {
        const ops = (JSON.parse(body.toString()) as { Operations: Array<{ op: string; path?: string }> })
          .Operations;
        const group = (await (await fetch(`${target}${path}`, { headers })).json()) as {
          members?: Array<{ value: string }>;
        };
        const members = new Set((group.members ?? []).map((m) => m.value));
        const gone = ops.some((op) => {
          const id = /^members\[value eq "(.*)"\]$/.exec(op.path ?? "")?.[1];
          return op.op.toLowerCase() === "remove" && id !== undefined && !members.has(id);
        });
        if (gone) {
          refused.push(Date.now());
          res.writeHead(400, { "content-type": "application/scim+json" });
          res.end(
            JSON.stringify({
              schemas: ["urn:ietf:params:scim:api:messages:2.0:Error"],
              status: "400",
              scimType: "noTarget",
              detail: "no such member",
            }),
          );
          return;
        }
      }
      const answer = await fetch(`${target}${path}`, {
        method: req.method,
        headers,
        body: body.length > 0 ? body : undefined,
      });
      const out: Record<string, string> = {};
      answer.headers.forEach((v, k) => {
        if (k !== "content-length" && k !== "transfer-encoding" && k !== "connection") out[k] = v;
      });
      res.writeHead(answer.status, out);
      res.end(Buffer.from(await answer.arrayBuffer()));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return { server, url: `http://127.0.0.1:${port}`, refused };
}

function memberIds(group: object | null): string[] {
  const members = ((group as { members?: unknown } | null)?.members ?? []) as Array<{ value: string }>;
  return members.map((m) => m.value);
}

describe("probes-b: group member removal on a strict platform", () => {
  let h: TestBridge | undefined;
  let proxy: Server | undefined;
  afterEach(async () => {
    await h?.close();
    await new Promise<void>((resolve) => (proxy ? proxy.close(() => resolve()) : resolve()));
    h = undefined;
    proxy = undefined;
  });

  it("converges when a member the source removes was already taken out on the platform (400 noTarget)", async () => {
    let target = "";
    const p = await startNoTargetProxy(() => target);
    proxy = p.server;
    h = await startTestBridge("probes-b-notarget", {
      start: false,
      config: {
        platform: {
          baseUrl: p.url,
          token: PLATFORM_TOKEN,
          allowInsecureHttp: true,
          requestsPerSecond: 2000,
          timeoutMs: 2_000,
          maxRetries: 4,
        },
      },
    });
    target = h.platformUrl;
    await h.start();
    const okta = h.scim("okta");
    const ada = await okta.createUser("ada@probe.example");
    const bob = await okta.createUser("bob@probe.example");
    const group = await okta.createGroup("probe-eng", [ada.id, bob.id]);
    await h.waitForIdle();

    const platform = new HttpPlatformClient({
      baseUrl: h.platformUrl,
      token: PLATFORM_TOKEN,
      allowInsecureHttp: true,
      timeoutMs: 2000,
      maxRetries: 0,
      budget: new NoopRequestBudget(),
    });
    try {
      const found = await platform.findGroupByDisplayName("probe-eng");
      const adaOnPlatform = await platform.findUserByUserName("ada@probe.example");
      expect(found).not.toBeNull();
      expect(adaOnPlatform).not.toBeNull();
      const groupId = found?.id as string;
      // Behind the bridge's back: ada leaves the group on the platform.
      await platform.patchGroup(groupId, [
        { op: "remove", path: `members[value eq ${JSON.stringify(adaOnPlatform?.id)}]` },
      ]);
      // Then the source takes ada out too.
      const res = await okta.patchGroup(group.id, [{ op: "remove", path: `members[value eq "${ada.id}"]` }]);
      expect(res.status).toBeLessThan(300);
      await h.waitForIdle();
      const status = await h.admin().get("/status");
      expect(status.body.deadLetters).toBe(0);
      const after = await platform.getGroup(groupId);
      const bobOnPlatform = await platform.findUserByUserName("bob@probe.example");
      expect(memberIds(after)).toEqual([bobOnPlatform?.id]);
      // And the group is recorded as synced: a later change of it still goes out.
      const cyd = await okta.createUser("cyd@probe.example");
      await okta.patchGroup(group.id, [{ op: "add", path: "members", value: [{ value: cyd.id }] }]);
      await h.waitForIdle();
      const cydOnPlatform = await platform.findUserByUserName("cyd@probe.example");
      await waitFor(async () => memberIds(await platform.getGroup(groupId)).length === 2, {
        timeoutMs: 5000,
        what: "cyd to join",
      });
      expect(new Set(memberIds(await platform.getGroup(groupId)))).toEqual(
        new Set([bobOnPlatform?.id, cydOnPlatform?.id]),
      );
    } finally {
      platform.close();
    }
  }, 60_000);
});

describe("probes-b: embed group names on a platform that compares them case-insensitively", () => {
  let h: TestBridge | undefined;
  let proxy: Server | undefined;
  afterEach(async () => {
    await h?.close();
    await new Promise<void>((resolve) => (proxy ? proxy.close(() => resolve()) : resolve()));
    h = undefined;
    proxy = undefined;
  });

  it("adopts the unowned embed group whose name differs only in case after a 409", async () => {
    let target = "";
    // The contract says only "409 when the name exists in the tenant": this platform compares names
    // regardless of case (as it does for userNames and attribute names).
    const p = await startNoTargetProxy(
      () => target,
      async ({ method, path, body, headers, target: to }) => {
        const m = /^\/api\/v1\/embed-tenants\/([^/]+)\/groups$/.exec(path);
        if (method !== "POST" || !m) return undefined;
        const name = (JSON.parse(body.toString()) as { name: string }).name;
        const list = (await (await fetch(`${to}${path}?first=100`, { headers })).json()) as {
          items?: Array<{ name: string }>;
        };
        if ((list.items ?? []).some((g) => g.name.toLowerCase() === name.toLowerCase())) {
          return { status: 409, body: { error: { code: "CONFLICT", message: `group ${name} exists` } } };
        }
        return undefined;
      },
    );
    proxy = p.server;
    h = await startTestBridge("probes-b-embed-case", {
      start: false,
      sources: { portal: { tokens: ["portal-token"], target: { embedTenant: "acme" } } },
      config: {
        platform: {
          baseUrl: p.url,
          token: PLATFORM_TOKEN,
          allowInsecureHttp: true,
          requestsPerSecond: 2000,
          timeoutMs: 2_000,
          maxRetries: 4,
        },
      },
    });
    target = h.platformUrl;
    const platform = new HttpPlatformClient({
      baseUrl: h.platformUrl,
      token: PLATFORM_TOKEN,
      allowInsecureHttp: true,
      timeoutMs: 2000,
      maxRetries: 0,
      budget: new NoopRequestBudget(),
    });
    try {
      const made = await platform.createEmbedGroup("acme", { name: "viewers" });
      await h.start();
      await h.scim("portal").createGroup("Viewers");
      await h.waitForIdle();
      const status = await h.admin().get("/status");
      expect(status.body.deadLetters).toBe(0);
      const groups: Array<{ id: string; name: string }> = [];
      for await (const g of platform.listEmbedGroups("acme")) groups.push({ id: g.id, name: g.name });
      expect(groups).toEqual([{ id: made.id, name: "Viewers" }]);
    } finally {
      platform.close();
    }
  }, 60_000);
});
