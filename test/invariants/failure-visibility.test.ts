import { Writable } from "node:stream";
import supertest from "supertest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningBridge, startBridge } from "../../src/bridge.js";
import { createLogger } from "../../src/observability/logger.js";
import { E2E_ADMIN_TOKEN, type TestBridge, USER_SCHEMA, startTestBridge } from "../helpers/bridge-harness.js";
import { waitFor } from "../helpers/redis-test-prefix.js";

const ENT = "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User";

/**
 * Invariant 7 (nothing fails silently), end to end: one permanent failure (a type clash with the
 * platform's attribute definition) is visible with its reason in all five places: the dead-letter
 * list, the dead_letters_total metric, a log line, the admin status, and the entity's sync status.
 * A dead letter does not hold `idle` false.
 */
describe("a permanent failure is visible everywhere", () => {
  let h: TestBridge;
  let bridge: RunningBridge;
  const lines: Array<Record<string, unknown>> = [];
  beforeAll(async () => {
    h = await startTestBridge("inv-visible", {
      start: false,
      sources: {
        okta: {
          tokens: ["okta-token"],
          attributes: { department: { from: `${ENT}:department`, type: "string" } },
        },
      },
    });
    h.emulator.seed({ attributes: [{ name: "department", type: "number" }] });
    const sink = new Writable({
      write(chunk, _enc, done) {
        for (const line of chunk.toString().split("\n")) if (line.trim()) lines.push(JSON.parse(line));
        done();
      },
    });
    bridge = await startBridge(h.config, { role: "all", logger: createLogger("info", {}, sink) });
  });
  afterAll(async () => {
    await bridge?.close();
    await h?.close();
  });

  it("dead-letter list, metric, log line, admin status and entity status all name it", async () => {
    const http = supertest(bridge.url as string);
    const admin = { Authorization: `Bearer ${E2E_ADMIN_TOKEN}` };
    const created = await http
      .post("/scim/v2/okta/Users")
      .set({ Authorization: "Bearer okta-token", "Content-Type": "application/scim+json" })
      .send({
        schemas: [USER_SCHEMA, ENT],
        userName: "clash@example.com",
        active: true,
        [ENT]: { department: "R&D" },
      });
    expect(created.status).toBe(201);
    const id = created.body.id as string;

    // 1. the dead-letter list, with the reason
    const letters = await waitFor(
      async () => {
        const res = await http.get("/admin/v1/dead-letters?source=okta").set(admin);
        return res.body.total === 1 ? res.body : undefined;
      },
      { what: "the dead letter" },
    );
    expect(letters.items[0]).toMatchObject({
      ref: { source: "okta", kind: "user", id },
      code: "attribute_type_clash",
      reason: expect.stringMatching(/department/),
    });

    // 2. the admin status: counted, and not holding idle false
    await waitFor(async () => (await http.get("/admin/v1/status").set(admin)).body.idle === true, {
      what: "idle despite the dead letter",
    });
    const status = await http.get("/admin/v1/status").set(admin);
    expect(status.body).toMatchObject({ idle: true, deadLetters: 1, pending: 0 });

    // 3. the entity's sync status
    const entity = await http.get(`/admin/v1/sources/okta/users/${id}`).set(admin);
    expect(entity.body).toMatchObject({ state: "dead", lastError: { code: "attribute_type_clash" } });
    expect(entity.body.lastError.message).toMatch(/department/);

    // 4. the metric
    const metrics = await http.get("/metrics");
    expect(metrics.text).toMatch(
      /dead_letters_total\{[^}]*source="okta"[^}]*code="attribute_type_clash"[^}]*\} 1|dead_letters_total\{[^}]*code="attribute_type_clash"[^}]*source="okta"[^}]*\} 1/,
    );

    // 5. a log line at error level naming the entity and the code, without personal data
    const line = lines.find(
      (l) =>
        (l["level"] as number) >= 50 &&
        JSON.stringify(l).includes(id) &&
        l["code"] === "attribute_type_clash",
    );
    expect(line, JSON.stringify(lines.filter((l) => (l["level"] as number) >= 40))).toBeDefined();
    expect(JSON.stringify(lines.filter((l) => (l["level"] as number) > 20))).not.toContain(
      "clash@example.com",
    );
  });
  it("a per-user failure in a bulk lifecycle call is visible in the same five places", async () => {
    const http = supertest(bridge.url as string);
    const admin = { Authorization: `Bearer ${E2E_ADMIN_TOKEN}` };
    const scim = { Authorization: "Bearer okta-token", "Content-Type": "application/scim+json" };
    const created = await http
      .post("/scim/v2/okta/Users")
      .set(scim)
      .send({ schemas: [USER_SCHEMA], userName: "refused@example.com", active: true });
    expect(created.status).toBe(201);
    const id = created.body.id as string;
    const pid = await waitFor(
      async () => (await http.get(`/admin/v1/sources/okta/users/${id}`).set(admin)).body.platformId as string,
      { what: "the platform id" },
    );
    h.emulator.drift({ action: "failBulkFor", userId: pid, code: "FORBIDDEN" });
    const off = await http
      .patch(`/scim/v2/okta/Users/${id}`)
      .set(scim)
      .send({
        schemas: ["urn:ietf:params:scim:api:messages:2.0:PatchOp"],
        Operations: [{ op: "replace", path: "active", value: false }],
      });
    expect(off.status).toBe(200);
    const letter = await waitFor(
      async () => {
        const res = await http.get("/admin/v1/dead-letters?source=okta").set(admin);
        return res.body.items.find((l: { ref: { id: string } }) => l.ref.id === id);
      },
      { what: "the dead letter" },
    );
    expect(letter).toMatchObject({ code: "platform_bulk_forbidden", reason: expect.any(String) });
    await waitFor(async () => (await http.get("/admin/v1/status").set(admin)).body.idle === true, {
      what: "idle",
    });
    expect((await http.get("/admin/v1/status").set(admin)).body.deadLetters).toBe(2);
    expect((await http.get(`/admin/v1/sources/okta/users/${id}`).set(admin)).body).toMatchObject({
      state: "dead",
      lastError: { code: "platform_bulk_forbidden" },
    });
    expect((await http.get("/metrics")).text).toMatch(
      /dead_letters_total\{(?=[^}]*source="okta")(?=[^}]*code="platform_bulk_forbidden")[^}]*\} 1/,
    );
    const line = lines.find(
      (l) =>
        (l["level"] as number) >= 50 &&
        JSON.stringify(l).includes(id) &&
        l["code"] === "platform_bulk_forbidden",
    );
    expect(line).toBeDefined();
    expect(h.platformUsers().get("refused@example.com")?.active).toBe(true);
  });
});
