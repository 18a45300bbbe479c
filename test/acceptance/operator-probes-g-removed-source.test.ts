/**
 * Probes g (the operator's surface): a source is taken out of the configuration (its identity
 * provider retired) while one of its users is a dead letter. `GET /status` still counts the letter
 * and `GET /dead-letters` lists it; the operator runs `dead-letters retry` (all, as after any
 * incident). The retried entity cannot sync (`unknown_source`): that is one dead letter again and
 * one error line, and the bridge goes idle. It was a loop: the failed sync left the entity's dirty
 * marker (it failed before reading the entity's generation), so the sweeper enqueued it again at
 * every sweep, for ever: `idle` false and `pending` 1 for good (`scim-bridge status` exit 1), a new
 * error line, failed job and `dead_letters_total` count each time, even after the letter was
 * discarded.
 */
import supertest from "supertest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningBridge, startBridge } from "../../src/bridge.js";
import type { ConfigInput } from "../../src/config/config-schema.js";
import { buildConfig } from "../../src/config/load-config.js";
import { createLogger } from "../../src/observability/logger.js";
import {
  E2E_ADMIN_TOKEN,
  type TestBridge,
  startTestBridge,
  deadLetteredUser,
} from "../helpers/bridge-harness.js";
import { waitFor } from "../helpers/redis-test-prefix.js";

let h: TestBridge;
let bridge: RunningBridge;
let userId: string;
const lines: string[] = [];

const admin = () => {
  const http = supertest(bridge.url as string);
  const auth = { Authorization: `Bearer ${E2E_ADMIN_TOKEN}` };
  return {
    get: (path: string) => http.get(`/admin/v1${path}`).set(auth),
    post: (path: string, body: object = {}) => http.post(`/admin/v1${path}`).set(auth).send(body),
    delete: (path: string) => http.delete(`/admin/v1${path}`).set(auth),
    metrics: async () => (await http.get("/metrics")).text,
  };
};

const deadLettersTotal = (text: string) =>
  Number(/^dead_letters_total\{source="entra",code="unknown_source"\} (\d+)$/m.exec(text)?.[1] ?? 0);

beforeAll(async () => {
  h = await startTestBridge("probes-g-removed-source");
  userId = await deadLetteredUser(h, "entra", "retired.source@example.com");
  await h.stop();
  // The same Redis and prefix, with entra taken out of the configuration.
  const input = JSON.parse(JSON.stringify(h.config)) as ConfigInput & { sources: Record<string, unknown> };
  delete input.sources.entra;
  bridge = await startBridge(buildConfig(input), {
    role: "all",
    logger: createLogger("info", {}, {
      write: (line: string) => {
        lines.push(line);
      },
    } as never),
  });
}, 30_000);
afterAll(async () => {
  await bridge?.close();
  await h?.close();
});

describe("probes g: a dead letter of a source taken out of the configuration", () => {
  it("retried, is one dead letter again (unknown_source) and the bridge goes idle; discarded, it is gone", async () => {
    const before = await admin().get("/status");
    expect(before.body).toMatchObject({ idle: true, deadLetters: 1 });
    const retry = await admin().post("/dead-letters/retry");
    expect(retry.status).toBe(202);
    expect(retry.body).toEqual({ retried: 1 });

    const letter = await waitFor(
      async () =>
        (await admin().get("/dead-letters")).body.items.find(
          (l: { code: string }) => l.code === "unknown_source",
        ),
      { what: "the unknown_source dead letter" },
    );
    expect(letter).toMatchObject({
      ref: { source: "entra", kind: "user", id: userId },
      reason: "unknown source entra",
    });
    await waitFor(async () => (await admin().get("/status")).body.idle === true, {
      timeoutMs: 10_000,
      what: "idle after the retry",
    });
    const status = await admin().get("/status");
    expect(status.body).toMatchObject({ idle: true, pending: 0, deadLetters: 1 });
    // Filtered by the removed source, the letter is listed (a 404 only for a source with nothing).
    const filtered = await admin().get("/dead-letters?source=entra");
    expect(filtered.status).toBe(200);
    expect(filtered.body.items.map((l: { ref: { id: string } }) => l.ref.id)).toEqual([userId]);
    expect((await admin().get("/dead-letters?source=entr")).status).toBe(404);

    // Several sweeps later (500 ms apart) nothing ran again: one letter, one count, one error line.
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    const metrics = await admin().metrics();
    expect(deadLettersTotal(metrics)).toBe(1);
    // The current size counts the removed source's letter too, as /status does.
    expect(metrics).toMatch(/^dead_letters\{source="entra"\} 1$/m);
    const errorLines = lines.filter((l) => l.includes('"level":50') && l.includes("unknown_source"));
    expect(errorLines).toHaveLength(1);
    expect((await admin().get("/status")).body).toMatchObject({ idle: true, pending: 0 });

    const discard = await admin().delete(`/dead-letters/entra/user/${userId}`);
    expect(discard.status).toBe(200);
    expect((await admin().get("/status")).body).toMatchObject({ idle: true, pending: 0, deadLetters: 0 });
    // Gone with its last letter: no stale size is left behind.
    expect(await admin().metrics()).not.toMatch(/^dead_letters\{source="entra"\}/m);
  }, 30_000);
});
