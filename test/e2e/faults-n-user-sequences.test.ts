/**
 * Faults-n: seeded random sequences of user changes at the identity provider (create, rename,
 * activate, deactivate, a typed attribute changed, delete, and the same userName created again
 * after a delete) while the platform fails: 5xx, 429 with Retry-After, answers lost after the write
 * was applied (ghost), and writes that land late (held past the client's timeout, applied before
 * the late-write check). Invariants 2 and 8 of the user path: once the faults stop and the bridge
 * is idle, every user is on the platform exactly as its source wants it (once, under its userName,
 * active or not, with its attribute value), a deleted user is gone (onDelete delete) or inactive
 * (onDelete deactivate), no other platform user is active, and nothing is a dead letter.
 *
 * Deterministic: the sequence comes from a seeded generator and the emulator's faults from its
 * seed; only their timing against the workers varies from run to run.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { FaultRule } from "../../src/platform/emulator/fault-injector.js";
import { PLATFORM_TOKEN, type TestBridge, startTestBridge } from "../helpers/bridge-harness.js";
import { FaultProxy } from "../helpers/fault-proxy.js";

const ENT = "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User";
const TIMEOUT_MS = 800;
const SLOTS = 5;
const STEPS = 45;

let h: TestBridge;
/** Passes everything on: it only lets the bridge's config name a base URL before the emulator's is known. */
let proxy: FaultProxy;

beforeAll(async () => {
  proxy = new FaultProxy();
  const proxyUrl = await proxy.start();
  const attributes = { dept: { from: `${ENT}:department`, type: "string" as const } };
  h = await startTestBridge("faults-n-user-sequences", {
    sources: {
      okta: { tokens: ["okta-token"], attributes },
      gone: { tokens: ["gone-token"], onDelete: "delete", attributes },
    },
    config: {
      platform: {
        baseUrl: proxyUrl,
        token: PLATFORM_TOKEN,
        allowInsecureHttp: true,
        requestsPerSecond: 2000,
        timeoutMs: TIMEOUT_MS,
        maxRetries: 2,
      },
      sync: {
        concurrency: 8,
        attempts: 30,
        lifecycleBatchWindowMs: 50,
        sweepIntervalMs: 300,
        sweepAfterMs: 600,
      },
    },
    start: false,
  });
  proxy.upstream = h.platformUrl;
  await h.start();
});
afterAll(async () => {
  await h?.close();
  await proxy?.close();
});

/** mulberry32: a small seeded generator, so a failing seed repeats its sequence. */
function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Late writes: held past the client's timeout, applied before the late-write check (2 × timeout). */
const FAULTS: FaultRule[] = [
  { type: "error", status: 503, probability: 0.06 },
  { type: "error", status: 429, retryAfterSeconds: 1, probability: 0.03, match: { operation: "bulkUsers" } },
  { type: "ghost", probability: 0.05, match: { method: "POST" } },
  { type: "ghost", probability: 0.05, match: { method: "PATCH" } },
  { type: "late", delayMs: TIMEOUT_MS + 400, probability: 0.05, match: { operation: "bulkUsers" } },
  { type: "late", delayMs: TIMEOUT_MS + 400, probability: 0.05, match: { operation: "createUser" } },
  { type: "late", delayMs: TIMEOUT_MS + 400, probability: 0.05, match: { operation: "patchUser" } },
  {
    type: "late",
    delayMs: TIMEOUT_MS + 400,
    probability: 0.05,
    match: { operation: "upsertUserAttributeValue" },
  },
];

/** What a source wants of one slot's user now. */
interface Slot {
  id?: string;
  userName: string;
  active: boolean;
  dept: string;
  /** userNames this slot's users had and left behind (renamed away or deleted). */
  left: Set<string>;
}

type PlatformUser = { id: string; userName: string; active: boolean };

async function runSequence(source: "okta" | "gone", seed: number) {
  const random = seeded(seed);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
  const scim = h.scim(source);
  let fresh = 0;
  const newName = (slot: number) => `s${seed}.${source}.${slot}.${fresh++}.n@example.com`;
  const slots: Slot[] = Array.from({ length: SLOTS }, (_, i) => ({
    userName: newName(i),
    active: true,
    dept: "D0",
    left: new Set<string>(),
  }));
  const log: string[] = [];
  const since = h.emulator.requests().at(-1)?.seq ?? 0;
  h.emulator.setFaults(FAULTS);
  try {
    for (let step = 0; step < STEPS; step++) {
      const i = Math.floor(random() * SLOTS);
      const slot = slots[i] as Slot;
      const ok = (status: number) => expect([200, 204], `${log.join("; ")}`).toContain(status);
      if (slot.id === undefined) {
        // Absent: created (again, under the userName it had: deleted and created again).
        slot.active = random() < 0.8;
        slot.dept = pick(["D1", "D2", "D3"]);
        const created = await scim.createUser(slot.userName, {
          active: slot.active,
          [ENT]: { department: slot.dept },
        });
        slot.id = created.id;
        slot.left.delete(slot.userName);
        log.push(`${i} create ${slot.active ? "on" : "off"} ${slot.dept}`);
        continue;
      }
      const what = pick(["active", "active", "active", "rename", "dept", "delete"] as const);
      if (what === "active") {
        slot.active = !slot.active;
        ok((await scim.patchUser(slot.id, [{ op: "replace", path: "active", value: slot.active }])).status);
        log.push(`${i} ${slot.active ? "activate" : "deactivate"}`);
      } else if (what === "rename") {
        slot.left.add(slot.userName);
        slot.userName = newName(i);
        ok(
          (await scim.patchUser(slot.id, [{ op: "replace", path: "userName", value: slot.userName }])).status,
        );
        log.push(`${i} rename`);
      } else if (what === "dept") {
        slot.dept = pick(["D1", "D2", "D3"].filter((d) => d !== slot.dept));
        ok(
          (await scim.patchUser(slot.id, [{ op: "replace", path: `${ENT}:department`, value: slot.dept }]))
            .status,
        );
        log.push(`${i} dept ${slot.dept}`);
      } else {
        ok((await scim.deleteUser(slot.id)).status);
        slot.id = undefined;
        slot.left.add(slot.userName);
        log.push(`${i} delete`);
      }
      if (random() < 0.3) await new Promise((r) => setTimeout(r, Math.floor(random() * 150)));
    }
  } finally {
    h.emulator.clearFaults();
  }
  await h.waitForIdle(90_000);

  const faults = h.emulator.requests().filter((r) => r.seq > since && r.fault !== undefined);
  if (process.env.FAULTS_N_VERBOSE)
    console.log(seed, source, faults.map((r) => `${r.operation}:${r.fault}`).join(" "));
  const context = `seed ${seed} (${source}): ${log.join("; ")}`;
  const users = (h.emulator.state() as unknown as { users: PlatformUser[] }).users.filter((u) =>
    u.userName.startsWith(`s${seed}.${source}.`),
  );
  const byName = new Map(users.map((u) => [u.userName, u]));
  const wrong: string[] = [];
  const wanted = new Set<string>();
  for (const [i, slot] of slots.entries()) {
    if (slot.id === undefined) continue;
    wanted.add(slot.userName);
    const u = byName.get(slot.userName);
    if (!u) {
      wrong.push(`${i}: ${slot.userName} missing`);
      continue;
    }
    if (u.active !== slot.active) wrong.push(`${i}: active ${u.active}, want ${slot.active}`);
    const dept = h.emulator.data.attributes.valuesOf(u.id).find((v) => v.name === "dept")?.value;
    if (dept !== slot.dept) wrong.push(`${i}: dept ${String(dept)}, want ${slot.dept}`);
  }
  for (const u of users) {
    if (wanted.has(u.userName)) continue;
    // Renamed away or deleted: no platform user under that name (onDelete delete), or none active.
    if (source === "gone") wrong.push(`${u.userName} left on the platform (active ${u.active})`);
    else if (u.active) wrong.push(`${u.userName} left active`);
  }
  expect(wrong, context).toEqual([]);
  expect(users.length, context).toBe(new Set(users.map((u) => u.userName.toLowerCase())).size);
  expect((await h.admin().get("/status")).body, context).toMatchObject({ idle: true, deadLetters: 0 });
  expect(h.emulator.violations(), context).toEqual([]);
}

describe("faults-n: seeded sequences of user changes under platform faults", () => {
  const seeds = process.env.FAULTS_N_SEEDS ? process.env.FAULTS_N_SEEDS.split(",").map(Number) : [11, 12, 13];
  for (const seed of seeds) {
    for (const source of ["okta", "gone"] as const) {
      it(`seed ${seed}, ${source === "gone" ? "onDelete delete" : "onDelete deactivate"}: every user as its source wants it`, async () => {
        await runSequence(source, seed);
      }, 120_000);
    }
  }
});
