/**
 * The baseline: a plain in-memory SCIM server built with scimmy-routers, in its own process.
 * Users live in a Map with an index by lower-cased userName, so `userName eq` lookups are fair.
 * Answers `{ready: url}` over IPC; `{seed: {count, prefix}}` stores users directly (answers
 * `{seeded: n}`); `{cpu: true}` answers `{cpuUsage}`; `{stop: true}` exits.
 */
import { randomUUID } from "node:crypto";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import express from "express";
import SCIMMY from "scimmy";
import SCIMMYRouters from "scimmy-routers";

const TOKEN = process.env.BENCH_BASELINE_TOKEN ?? "";

type Stored = Record<string, unknown> & { id: string; userName: string };
const users = new Map<string, Stored>();
const byUserName = new Map<string, string>();

function store(data: Record<string, unknown>, id: string = randomUUID()): Stored {
  const now = new Date().toISOString();
  const previous = users.get(id);
  const meta = previous?.meta as { created?: string } | undefined;
  const user = {
    ...data,
    id,
    meta: { created: meta?.created ?? now, lastModified: now },
  } as unknown as Stored;
  if (previous) byUserName.delete(previous.userName.toLowerCase());
  users.set(id, user);
  byUserName.set(user.userName.toLowerCase(), id);
  return user;
}

/** A single `userName eq "x"` expression, as SCIMMY parses it: [{userName: ["eq", "x"]}]. */
function userNameEq(filter: unknown): string | undefined {
  if (!Array.isArray(filter) || filter.length !== 1) return undefined;
  const expression = filter[0] as Record<string, unknown>;
  const keys = Object.keys(expression);
  if (keys.length !== 1 || keys[0]?.toLowerCase() !== "username") return undefined;
  const comparison = expression[keys[0]];
  if (!Array.isArray(comparison) || String(comparison[0]).toLowerCase() !== "eq") return undefined;
  return typeof comparison[1] === "string" ? comparison[1] : undefined;
}

SCIMMY.Resources.declare(SCIMMY.Resources.User, {
  ingress: (resource: { id?: string }, instance: object) => {
    const data = JSON.parse(JSON.stringify(instance)) as Record<string, unknown>;
    const userName = String(data.userName ?? "");
    const owner = byUserName.get(userName.toLowerCase());
    if (owner !== undefined && owner !== resource.id) {
      throw new SCIMMY.Types.Error(409, "uniqueness", "userName already exists");
    }
    if (resource.id && !users.has(resource.id)) throw new SCIMMY.Types.Error(404, "", "not found");
    return store(data, resource.id);
  },
  egress: (resource: { id?: string; filter?: unknown }) => {
    if (resource.id) {
      const found = users.get(resource.id);
      if (!found) throw new SCIMMY.Types.Error(404, "", `Resource ${resource.id} not found`);
      return found;
    }
    const userName = userNameEq(resource.filter);
    if (userName !== undefined) {
      const id = byUserName.get(userName.toLowerCase());
      const found = id === undefined ? undefined : users.get(id);
      return found ? [found] : [];
    }
    return [...users.values()];
  },
  degress: (resource: { id?: string }) => {
    const found = resource.id ? users.get(resource.id) : undefined;
    if (!found) throw new SCIMMY.Types.Error(404, "", "not found");
    users.delete(found.id);
    byUserName.delete(found.userName.toLowerCase());
  },
});

const app = express();
app.use(
  "/scim/v2/baseline",
  new SCIMMYRouters({
    type: "bearer",
    handler: (request: express.Request) => {
      if (request.header("Authorization") !== `Bearer ${TOKEN}`) throw new Error("Not authorised");
      return "bench";
    },
  }) as unknown as express.Router,
);

const server = createServer(app);
server.keepAliveTimeout = 65_000;
await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
const { port } = server.address() as AddressInfo;

process.on(
  "message",
  (message: { stop?: boolean; cpu?: boolean; seed?: { count: number; prefix: string } }) => {
    if (message?.cpu) process.send?.({ cpuUsage: process.cpuUsage() });
    if (message?.seed) {
      const { count, prefix } = message.seed;
      for (let i = 0; i < count; i += 1) {
        store({
          schemas: ["urn:ietf:params:scim:schemas:core:2.0:User"],
          userName: `${prefix}${i}@example.com`,
          name: { givenName: "Seed", familyName: `User${i}` },
          emails: [{ value: `${prefix}${i}@example.com`, type: "work", primary: true }],
          active: true,
        });
      }
      process.send?.({ seeded: users.size });
    }
    if (message?.stop) server.close(() => process.exit(0));
  },
);
process.on("disconnect", () => process.exit(0));
process.send?.({ ready: `http://127.0.0.1:${port}` });
