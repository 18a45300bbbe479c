import { Writable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { signWebhook } from "../../src/hooks/standard-webhooks.js";
import { oktaDelivery, oktaEvent } from "../fixtures/hooks/okta-delivery.js";
import {
  GROUP_SCHEMA,
  PATCH_SCHEMA,
  PLATFORM_TOKEN,
  type TestBridge,
  USER_SCHEMA,
  startTestBridge,
} from "../helpers/bridge-harness.js";
import { waitFor } from "../helpers/redis-test-prefix.js";

const ENT = "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User";

/**
 * Personal data and secrets, each carrying the sentinel "zqpii" where its form allows, so that a
 * part of one (a first name alone, a truncated login) is caught too.
 */
const PII = {
  userName: "zqpii-marker-1@example.com",
  displayName: "Zqpii Markerson",
  givenName: "Zqpiigiven",
  familyName: "Zqpiifamily",
  workEmail: "zqpii-mail-2@example.net",
  phone: "+1 555 0199 7731",
  street: "77 Zqpii Street",
  locality: "Zqpiiville",
  postalCode: "ZQPII 7PX",
  password: "Pw-zqpii-marker-!",
  externalId: "zqpii-ext-3@example.com",
  renamed: "Zqpii Renamed-Person",
  conflicting: "zqpii-dup-9@example.com",
  clash: "zqpii-clash-7@example.com",
  faulted: "zqpii-faulted-10@example.com",
  adopted: "zqpii-adopted-16@example.com",
  okta: { login: "zqpii-okta-4@example.com", displayName: "Zqpii Oktaperson", oktaId: "00uzq0001" },
  oktaActor: { alternateId: "zqpii-okta-admin-5@example.com", displayName: "Zqpii Oktaadmin" },
  events: {
    userName: "zqpii-evt-6@example.com",
    displayName: "Zqpii Eventperson",
    externalId: "zqpii-hr-6@example.com",
  },
  orphan: "zqpii-orphan-8@example.com",
  filterValue: "zqpii-filter-11@example.com",
  unknownUser: "zqpii-nobody-12@example.com",
  embed: {
    userName: "zqpii-embed-13@example.com",
    externalId: "zqpii-embed-ext-14@example.com",
    bare: "zqpii-embed-15@example.com",
  },
};
const SECRETS = {
  scimToken: "zqpii-scim-token-a1",
  embedToken: "zqpii-embed-token-e5",
  adminToken: "zqpii-admin-token-b2",
  oktaSecret: "zqpii-okta-secret-c3",
  eventsKey: "zqpii-events-key-d4, 32 bytes long",
  platformToken: PLATFORM_TOKEN,
};
const EVENTS_SECRET = `whsec_${Buffer.from(SECRETS.eventsKey).toString("base64")}`;
/** Group names: not personal data (see docs/operations.md), kept apart from the markers. */
const GROUP_NAME = "Qx Analysts";

function leaves(value: unknown): string[] {
  if (typeof value === "string") return [value];
  if (value && typeof value === "object") return Object.values(value).flatMap(leaves);
  return [];
}

/** Every form a marker may take in a line: as is, URL-encoded (both space forms), JSON-escaped, spaceless. */
function formsOf(marker: string): string[] {
  const encoded = encodeURIComponent(marker);
  return [
    marker,
    encoded,
    encoded.replace(/%20/g, "+"),
    JSON.stringify(marker).slice(1, -1),
    marker.replace(/\s+/g, ""),
  ].map((form) => form.toLowerCase());
}

const FORBIDDEN = [
  "zqpii",
  ...[
    ...leaves(PII),
    ...leaves(SECRETS),
    EVENTS_SECRET,
    Buffer.from(SECRETS.eventsKey).toString("base64"),
  ].flatMap(formsOf),
  "0199 7731",
  "01997731",
];

/** The forbidden strings a line holds (case-insensitively). */
function leaksIn(line: string): string[] {
  const lower = line.toLowerCase();
  return [...new Set(FORBIDDEN.filter((form) => lower.includes(form)))];
}

/**
 * "Structured logs without personal data", end to end at the lowest level the bridge supports
 * (trace): every line the bridge writes while identity providers push marked users and groups over
 * SCIM (good and bad requests), Okta Event Hooks and signed events, while the platform fails
 * transiently and permanently, and while admins reconcile (the deprovisioning guard trips) and
 * resync, holds no personal data, no token, no secret and no password, in any spelling.
 */
describe("no personal data in any log line", () => {
  let h: TestBridge;
  const lines: string[] = [];
  const consoleLines: string[] = [];
  const sink = new Writable({
    write(chunk, _enc, done) {
      for (const line of chunk.toString().split("\n")) if (line.trim()) lines.push(line);
      done();
    },
  });

  beforeAll(async () => {
    for (const method of ["log", "info", "warn", "error", "debug", "trace"] as const) {
      const original = console[method].bind(console);
      vi.spyOn(console, method).mockImplementation((...args: unknown[]) => {
        consoleLines.push(args.map((a) => (typeof a === "string" ? a : JSON.stringify(a))).join(" "));
        original(...args);
      });
    }
    h = await startTestBridge("inv-no-pii-logs", {
      log: { level: "trace", destination: sink },
      config: {
        logLevel: "trace",
        admin: { tokens: [SECRETS.adminToken] },
        reconcile: { schedule: "0 0 1 1 *", orphans: "deactivate", maxDeprovisionShare: 0.1, keepRuns: 50 },
      },
      sources: {
        okta: {
          tokens: [SECRETS.scimToken],
          attributes: {
            department: { from: `${ENT}:department`, type: "string" },
            phone: { from: 'phoneNumbers[type eq "work"].value', type: "string" },
            street: { from: 'addresses[type eq "work"].streetAddress', type: "string" },
            // A value that is no number: synced with a problem.
            badge: { from: "title", type: "number" },
          },
          hooks: { okta: { secret: SECRETS.oktaSecret }, events: { secret: EVENTS_SECRET } },
        },
        // Embed users are named by externalId (or userName): here emails.
        hr: { tokens: [SECRETS.embedToken], target: { embedTenant: "acme" }, onDelete: "delete" },
      },
      start: false,
    });
    // A permanent failure: the platform's department is a number, the directory's a string.
    h.emulator.seed({
      attributes: [{ name: "department", type: "number" }],
      // A platform user of the same userName: the bridge's create meets a 409 and adopts it.
      users: [{ userName: PII.adopted, displayName: PII.displayName, active: true }],
    });
    await h.start();
  }, 30_000);

  afterAll(async () => {
    vi.restoreAllMocks();
    await h?.close();
  });

  const scimHeaders = {
    Authorization: `Bearer ${SECRETS.scimToken}`,
    "Content-Type": "application/scim+json",
  };
  const scim = {
    post: (path: string, body: unknown) =>
      h.http
        .post(`/scim/v2/okta${path}`)
        .set(scimHeaders)
        .send(body as object),
    put: (path: string, body: unknown) =>
      h.http
        .put(`/scim/v2/okta${path}`)
        .set(scimHeaders)
        .send(body as object),
    patch: (path: string, Operations: unknown[]) =>
      h.http
        .patch(`/scim/v2/okta${path}`)
        .set(scimHeaders)
        .send({ schemas: [PATCH_SCHEMA], Operations }),
    get: (path: string) => h.http.get(`/scim/v2/okta${path}`).set(scimHeaders),
    delete: (path: string) => h.http.delete(`/scim/v2/okta${path}`).set(scimHeaders),
  };
  const admin = {
    get: (path: string) =>
      h.http.get(`/admin/v1${path}`).set("Authorization", `Bearer ${SECRETS.adminToken}`),
    post: (path: string, body: unknown = {}) =>
      h.http
        .post(`/admin/v1${path}`)
        .set("Authorization", `Bearer ${SECRETS.adminToken}`)
        .send(body as object),
  };
  const waitForIdle = () =>
    waitFor(async () => (await admin.get("/status")).body.idle === true, { timeoutMs: 30_000, what: "idle" });
  const platformIdOf = async (id: string) =>
    waitFor(
      async () => (await admin.get(`/sources/okta/users/${id}`)).body.platformId as string | undefined,
      {
        what: "the platform id",
      },
    );

  const fullUser = {
    schemas: [USER_SCHEMA, ENT],
    userName: PII.userName,
    externalId: PII.externalId,
    displayName: PII.displayName,
    name: { givenName: PII.givenName, familyName: PII.familyName, formatted: PII.displayName },
    emails: [
      { value: PII.userName, type: "work", primary: true },
      { value: PII.workEmail, type: "home" },
    ],
    phoneNumbers: [{ value: PII.phone, type: "work" }],
    addresses: [
      {
        type: "work",
        streetAddress: PII.street,
        locality: PII.locality,
        postalCode: PII.postalCode,
        country: "PT",
      },
    ],
    password: PII.password,
    title: PII.street,
    active: true,
  };

  function postOkta(events: unknown[], secret = SECRETS.oktaSecret) {
    return h.http
      .post("/hooks/okta/okta")
      .set("Authorization", secret)
      .set("Content-Type", "application/json")
      .send(JSON.stringify(oktaDelivery(events)));
  }
  function oktaUserEvent(
    name: Parameters<typeof oktaEvent>[0],
    user: Record<string, string>,
    published: number,
  ) {
    const event = oktaEvent(name, { user, group: { id: "00gzq0001", displayName: GROUP_NAME }, published });
    event.actor = { ...event.actor, ...PII.oktaActor };
    return event;
  }
  function postEvents(body: unknown, secret = EVENTS_SECRET) {
    const raw = JSON.stringify(body);
    const id = `msg_${Math.random().toString(36).slice(2)}`;
    const ts = Math.floor(Date.now() / 1000);
    return h.http
      .post("/hooks/okta/events")
      .set("Content-Type", "application/json")
      .set("webhook-id", id)
      .set("webhook-timestamp", String(ts))
      .set("webhook-signature", signWebhook(secret, id, ts, raw))
      .send(raw);
  }

  it("holds none at trace, whatever the bridge is asked and whatever the platform answers", async () => {
    // --- SCIM users: create, read, filter, PATCH, PUT, errors.
    const created = await scim.post("/Users", fullUser);
    expect(created.status).toBe(201);
    const userId = created.body.id as string;
    expect((await scim.get(`/Users/${userId}`)).status).toBe(200);
    for (const filter of [
      `userName eq "${PII.userName}"`,
      `emails.value eq "${PII.workEmail}" or displayName sw "${PII.displayName}"`,
    ]) {
      expect((await scim.get(`/Users?filter=${encodeURIComponent(filter)}`)).status).toBe(200);
    }
    // Filters the bridge refuses (400) still reach the request log.
    for (const filter of [`userName eq ${PII.filterValue}`, `externalId eq '${PII.externalId}'`]) {
      expect((await scim.get(`/Users?filter=${encodeURIComponent(filter)}`)).status).toBe(400);
    }
    expect((await scim.get(`/Users?filter=${PII.filterValue}`)).status).toBe(400);
    expect((await scim.get(`/Users?userName=${encodeURIComponent(PII.userName)}`)).status).toBe(200);
    expect(
      (
        await scim.post("/Users/.search", {
          schemas: ["urn:ietf:params:scim:api:messages:2.0:SearchRequest"],
          filter: `userName eq "${PII.userName}"`,
        })
      ).status,
    ).toBe(200);
    const patched = await scim.patch(`/Users/${userId}`, [
      { op: "replace", path: "displayName", value: PII.renamed },
      { op: "replace", path: 'phoneNumbers[type eq "work"].value', value: PII.phone },
      { op: "add", path: "name.givenName", value: PII.givenName },
    ]);
    expect(patched.status).toBe(200);
    expect(
      (await scim.patch(`/Users/${userId}`, [{ op: "replace", path: "active", value: PII.userName }])).status,
    ).toBe(400);
    expect(
      (await scim.patch(`/Users/${userId}`, [{ op: "replace", path: `emails[value eq "${PII.workEmail}"` }]))
        .status,
    ).toBe(400);
    expect(
      (await scim.patch(`/Users/${userId}`, [{ op: PII.displayName, path: "displayName" }])).status,
    ).toBe(400);
    const put = await scim.put(`/Users/${userId}`, { ...fullUser, displayName: PII.displayName });
    expect(put.status).toBe(200);
    // 409: a userName another user holds.
    expect((await scim.post("/Users", { ...fullUser, externalId: undefined })).status).toBe(409);
    const other = await scim.post("/Users", {
      schemas: [USER_SCHEMA],
      userName: PII.conflicting,
      active: true,
    });
    expect(other.status).toBe(201);
    expect(
      (
        await scim.patch(`/Users/${other.body.id}`, [
          { op: "replace", path: "userName", value: PII.userName },
        ])
      ).status,
    ).toBe(409);
    // 400: values of the wrong type, and no userName.
    expect(
      (
        await scim.post("/Users", {
          ...fullUser,
          userName: PII.faulted,
          emails: PII.workEmail,
          active: PII.phone,
        })
      ).status,
    ).toBe(400);
    expect((await scim.post("/Users", { schemas: [USER_SCHEMA], displayName: PII.displayName })).status).toBe(
      400,
    );
    expect(
      (
        await h.http
          .post("/scim/v2/okta/Users")
          .set(scimHeaders)
          .send(`{"userName": "${PII.userName}", "password": "${PII.password}"`)
      ).status,
    ).toBe(400);
    // 404s, and a request whose credentials are wrong.
    expect((await scim.get("/Users/00000000-0000-0000-0000-000000000000")).status).toBe(404);
    expect((await scim.patch("/Users/00000000-0000-0000-0000-000000000000", [])).status).toBe(404);
    expect((await scim.delete("/Groups/00000000-0000-0000-0000-000000000000")).status).toBe(404);
    expect((await scim.get(`/Users/${encodeURIComponent(PII.unknownUser)}`)).status).toBe(404);
    // A plain login (no `@`, nothing to encode) where an id goes.
    expect((await scim.get("/Users/zqpii-jdoe")).status).toBe(404);
    expect(
      (
        await h.http
          .get("/scim/v2/okta/Users")
          .set("Authorization", `Bearer ${SECRETS.scimToken}x`)
          .set("X-Debug-Password", PII.password)
      ).status,
    ).toBe(401);

    // --- SCIM groups.
    const group = await scim.post("/Groups", {
      schemas: [GROUP_SCHEMA],
      displayName: GROUP_NAME,
      members: [{ value: userId, display: PII.displayName }],
    });
    expect(group.status).toBe(201);
    const groupId = group.body.id as string;
    expect(
      (
        await scim.patch(`/Groups/${groupId}`, [
          { op: "add", path: "members", value: [{ value: other.body.id, display: PII.renamed }] },
        ])
      ).status,
    ).toBeLessThan(300);
    expect(
      (
        await scim.patch(`/Groups/${groupId}`, [
          { op: "add", path: "members", value: [{ value: PII.userName }] },
        ])
      ).status,
    ).toBe(400);
    expect(
      (
        await scim.put(`/Groups/${groupId}`, {
          schemas: [GROUP_SCHEMA],
          displayName: GROUP_NAME,
          members: [{ value: userId }],
        })
      ).status,
    ).toBe(200);
    expect(
      (await scim.get(`/Groups?filter=${encodeURIComponent(`displayName eq "${GROUP_NAME}"`)}`)).status,
    ).toBe(200);
    const doomed = await scim.post("/Groups", { schemas: [GROUP_SCHEMA], displayName: `${GROUP_NAME} 2` });
    expect((await scim.delete(`/Groups/${doomed.body.id}`)).status).toBe(204);
    await waitForIdle();
    expect(h.platformUsers().get(PII.userName)?.active).toBe(true);

    // --- A user the platform already has (same userName): adopted.
    expect(
      (
        await scim.post("/Users", {
          schemas: [USER_SCHEMA],
          userName: PII.adopted,
          displayName: PII.displayName,
        })
      ).status,
    ).toBe(201);
    await waitForIdle();
    expect(h.platformUsers().get(PII.adopted)?.displayName).toBe(PII.displayName);

    // --- A transient fault (5xx, then a 429 with Retry-After) the sync rides out.
    h.emulator.addFault({ type: "error", status: 503, count: 2, match: { operation: "createUser" } });
    h.emulator.addFault({
      type: "error",
      status: 429,
      retryAfterSeconds: 1,
      count: 1,
      match: { operation: "createUser" },
    });
    const faulted = await scim.post("/Users", {
      schemas: [USER_SCHEMA],
      userName: PII.faulted,
      displayName: PII.displayName,
      active: true,
    });
    expect(faulted.status).toBe(201);
    await waitForIdle();
    expect(h.platformUsers().get(PII.faulted)).toBeDefined();

    // --- A fault that outlasts the client's retries: the sync job fails and runs again.
    h.emulator.addFault({ type: "error", status: 502, count: 6, match: { operation: "patchUser" } });
    expect(
      (
        await scim.patch(`/Users/${faulted.body.id}`, [
          { op: "replace", path: "displayName", value: PII.renamed },
        ])
      ).status,
    ).toBe(200);
    await waitForIdle();
    expect(h.platformUsers().get(PII.faulted)?.displayName).toBe(PII.renamed);

    // --- A permanent failure: a dead letter.
    const clash = await scim.post("/Users", {
      schemas: [USER_SCHEMA, ENT],
      userName: PII.clash,
      displayName: PII.displayName,
      active: true,
      [ENT]: { department: PII.street },
    });
    expect(clash.status).toBe(201);
    await waitFor(async () => (await admin.get("/dead-letters?source=okta")).body.total === 1, {
      what: "the dead letter",
    });

    // --- Okta Event Hooks: applied, rejected (a login another user holds), unauthorised, verified.
    const t0 = Date.now() - 60_000;
    const oktaUser = { id: PII.okta.oktaId, alternateId: PII.okta.login, displayName: PII.okta.displayName };
    const delivered = await postOkta([
      oktaUserEvent("user-lifecycle-create", oktaUser, t0),
      oktaUserEvent("user-lifecycle-activate", oktaUser, t0 + 10),
      oktaUserEvent("group-user-membership-add", oktaUser, t0 + 20),
      oktaUserEvent("user-account-update-profile", oktaUser, t0 + 30),
    ]);
    expect(delivered.status).toBe(200);
    const rejected = await postOkta([
      oktaUserEvent(
        "user-lifecycle-create",
        { id: "00uzq0002", alternateId: PII.userName, displayName: PII.displayName },
        t0 + 40,
      ),
    ]);
    expect(rejected.body.outcomes).toEqual({ rejected: 1 });
    expect(
      (await postOkta([oktaUserEvent("user-lifecycle-create", oktaUser, t0)], PII.password)).status,
    ).toBe(401);
    expect(
      (
        await h.http
          .get("/hooks/okta/okta")
          .set("Authorization", SECRETS.oktaSecret)
          .set("X-Okta-Verification-Challenge", PII.userName)
      ).status,
    ).toBeLessThan(300);

    // --- Signed events: applied, a rejected delivery (unknown member, name held by another), a bad signature.
    const eventUser = {
      schemas: [USER_SCHEMA],
      externalId: PII.events.externalId,
      userName: PII.events.userName,
      displayName: PII.events.displayName,
      name: { givenName: PII.givenName, familyName: PII.familyName },
      emails: [{ value: PII.events.userName, primary: true }],
      phoneNumbers: [{ value: PII.phone, type: "work" }],
      active: true,
    };
    expect(
      (
        await postEvents({
          events: [
            { type: "user.upserted", data: eventUser },
            {
              type: "group.upserted",
              data: {
                externalId: "hr-team-zq",
                displayName: `${GROUP_NAME} HR`,
                members: [{ userName: PII.events.userName }],
              },
            },
            { type: "ping", data: {} },
          ],
        })
      ).status,
    ).toBe(200);
    const refused = await postEvents({
      events: [
        {
          type: "user.upserted",
          data: { ...eventUser, externalId: "another-hr-id", userName: PII.userName },
        },
        {
          type: "group.upserted",
          data: {
            externalId: "hr-team-zq2",
            displayName: `${GROUP_NAME} HR2`,
            members: [{ userName: PII.unknownUser }],
          },
        },
        { type: "user.deleted", data: { userName: PII.unknownUser } },
        { type: "user.upserted", data: { userName: PII.faulted, emails: PII.workEmail } },
      ],
    });
    expect(refused.status).toBeGreaterThanOrEqual(400);
    expect(refused.status).toBeLessThan(500);
    expect(
      (await postEvents({ type: "ping", data: {} }, `whsec_${Buffer.from(PII.password).toString("base64")}`))
        .status,
    ).toBe(401);
    expect(
      (await postEvents({ type: "user.deleted", data: { externalId: PII.events.externalId } })).status,
    ).toBe(200);
    await waitForIdle();

    // --- Reconcile: a dry run, then a run whose orphan deactivation trips the guard; confirmed.
    h.emulator.drift({
      action: "addOrphanUser",
      user: { userName: PII.orphan, displayName: PII.displayName },
    });
    h.emulator.drift({ action: "setUserActive", userId: await platformIdOf(userId), active: false });
    const settle = (runId: string) =>
      waitFor(
        async () => {
          const run = await admin.get(`/reconcile-runs/${runId}`);
          return ["queued", "running"].includes(run.body.state) ? undefined : run.body;
        },
        { what: "the run to settle", timeoutMs: 30_000 },
      );
    const dry = await admin.post("/sources/okta/reconcile", { dryRun: true });
    expect(dry.status).toBe(202);
    expect((await settle(dry.body.runId)).state).toBe("succeeded");
    const real = await admin.post("/sources/okta/reconcile", { dryRun: false });
    expect((await settle(real.body.runId)).state).toBe("awaiting-confirmation");
    expect((await admin.post(`/reconcile-runs/${real.body.runId}/confirm`)).status).toBeLessThan(300);
    const confirmed = await waitFor(
      async () => {
        const run = (await admin.get(`/reconcile-runs/${real.body.runId}`)).body;
        return ["succeeded", "failed"].includes(run.state) ? run : undefined;
      },
      { what: "the confirmed run", timeoutMs: 30_000 },
    );
    // The clash's dead letter fails its repair again; the orphan is deactivated all the same.
    expect(confirmed).toMatchObject({ repairs: { orphanDeactivations: 1 } });
    await waitForIdle();
    expect(h.platformUsers().get(PII.orphan)?.active).toBe(false);

    // --- Resync: everything, then one user whose platform copy drifted.
    expect((await admin.post("/sources/okta/resync", {})).status).toBe(202);
    await waitForIdle();
    h.emulator.drift({ action: "setUserActive", userId: await platformIdOf(userId), active: false });
    expect((await admin.post("/sources/okta/resync", { users: [userId], groups: [groupId] })).status).toBe(
      202,
    );
    await waitFor(async () => h.platformUsers().get(PII.userName)?.active === true, { what: "the resync" });
    await waitForIdle();
    expect((await admin.get(`/sources/okta/users/${clash.body.id}`)).status).toBe(200);
    // An operator's lookup by userName (the value travels in the query string).
    const found = await admin.get(`/sources/okta/users?userName=${encodeURIComponent(PII.userName)}`);
    expect(found.body.items?.[0]?.id).toBe(userId);
    expect((await h.http.get("/admin/v1/status").set("Authorization", `Bearer ${PII.password}`)).status).toBe(
      401,
    );
    expect((await admin.get("/dead-letters")).status).toBe(200);

    // --- An embed-tenant source: members named by externalIds that are emails; one leaves.
    const embed = (method: "post" | "patch" | "delete", path: string, body?: unknown) =>
      h.http[method](`/scim/v2/hr${path}`)
        .set({ Authorization: `Bearer ${SECRETS.embedToken}`, "Content-Type": "application/scim+json" })
        .send(body as object);
    const e1 = await embed("post", "/Users", {
      schemas: [USER_SCHEMA],
      userName: PII.embed.userName,
      externalId: PII.embed.externalId,
      displayName: PII.displayName,
      active: true,
    });
    const e2 = await embed("post", "/Users", {
      schemas: [USER_SCHEMA],
      userName: PII.embed.bare,
      active: true,
    });
    expect([e1.status, e2.status]).toEqual([201, 201]);
    const team = await embed("post", "/Groups", {
      schemas: [GROUP_SCHEMA],
      displayName: `${GROUP_NAME} Embed`,
      members: [{ value: e1.body.id }, { value: e2.body.id }],
    });
    expect(team.status).toBe(201);
    await waitForIdle();
    expect(
      (
        await embed("patch", `/Users/${e2.body.id}`, {
          schemas: [PATCH_SCHEMA],
          Operations: [{ op: "replace", path: "active", value: false }],
        })
      ).status,
    ).toBe(200);
    expect((await embed("delete", `/Users/${e1.body.id}`)).status).toBe(204);
    await waitForIdle();
    const acme = (
      h.emulator.state() as unknown as {
        embedTenants: Array<{ name: string; groups: Array<{ members: string[] }> }>;
      }
    ).embedTenants.find((t) => t.name === "acme");
    expect(acme?.groups[0]?.members).toEqual([]);

    // --- Deletes: a group, users (deactivated on the platform).
    expect((await scim.delete(`/Groups/${groupId}`)).status).toBe(204);
    expect((await scim.delete(`/Users/${userId}`)).status).toBe(204);
    expect((await scim.delete(`/Users/${other.body.id}`)).status).toBe(204);
    expect((await scim.delete(`/Users/${userId}`)).status).toBe(404);
    await waitForIdle();
    expect(h.platformUsers().get(PII.userName)?.active).toBe(false);
    await h.stop();

    // The lines were written at every level, the debug-only parts included: the check is not vacuous.
    const levels = new Set(lines.map((line) => JSON.parse(line).level as number));
    expect([...levels]).toEqual(expect.arrayContaining([20, 30, 40, 50]));
    expect(lines.some((line) => line.includes('"msg":"platform call"'))).toBe(true);
    expect(lines.some((line) => line.includes('"query":{"filter":'))).toBe(true);
    expect(lines.some((line) => line.includes("attribute_type_clash"))).toBe(true);
    expect(lines.some((line) => line.includes("okta event rejected"))).toBe(true);
    expect(lines.some((line) => line.includes("sync failed, will retry"))).toBe(true);
    expect(lines.some((line) => line.includes("attribute_value_invalid"))).toBe(true);

    const leaks = [...lines, ...consoleLines]
      .map((line) => ({ line, leaks: leaksIn(line) }))
      .filter((l) => l.leaks.length > 0);
    expect(leaks).toEqual([]);
  }, 120_000);
});
