/**
 * Acceptance probes (round i), end to end: request sequences of the identity providers' SCIM
 * clients tested least, as their code sends them, checked on the emulated platform once the queues
 * drain.
 * - Keycloak keycloak-scim2-storage (suvera): filters pasted unencoded into
 *   `?filter=userName+eq+%22<value>%22`, PATCHes built by its UserRecordPatchBuilder
 *   (`emails[type eq work].value` unquoted, `name` as a whole object), members joined with
 *   `display` and left with `members[value eq "<id>"]`, a group renamed by a PUT of the group as it
 *   read it back.
 * - Keycloak keycloak-scim (libre.sh / mitodl, UnboundID's client): every change a full PUT carrying
 *   a relative `meta.location` and members with relative `$ref`s, `Content-Type: application/json`.
 * - awslabs/ssosync (Google Workspace to an AWS IAM Identity Center-style SCIM endpoint): Go's
 *   form-encoded filters, `id eq "<group>" and members eq "<user>"`, names sent blank, an address
 *   holding only its type, membership PATCHes with value lists, updates and deactivation by PUT.
 * - Google Workspace auto-provisioning: SCIM 1.1 and 2.0 schema URNs together, a paged look-up,
 *   suspension and restore by a no-path replace.
 * - JumpCloud: full PUTs that leave out what the user no longer has.
 * Intake-level probes of the same round: idp-probes-i.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PATCH_SCHEMA, type TestBridge, USER_SCHEMA, startTestBridge } from "../helpers/bridge-harness.js";

const GROUP_SCHEMA = "urn:ietf:params:scim:schemas:core:2.0:Group";
const ENT = "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User";

let h: TestBridge;

beforeAll(async () => {
  h = await startTestBridge("acceptance-idp-probes-i-e2e", {
    sources: {
      keycloak: { tokens: ["keycloak-token"] },
      libre: { tokens: ["libre-token"] },
      ssosync: { tokens: ["ssosync-token"] },
      google: { tokens: ["google-token"] },
      jumpcloud: { tokens: ["jumpcloud-token"] },
    },
  });
});
afterAll(async () => {
  await h?.close();
});

type PUser = {
  id: string;
  userName: string;
  externalId?: string;
  active: boolean;
  displayName?: string;
  name?: { givenName?: string; familyName?: string };
  emails?: Array<{ value: string; type?: string; primary?: boolean }>;
} & Record<string, unknown>;
type PGroup = { id: string; displayName: string; members: string[] };
type Snapshot = { users: PUser[]; groups: PGroup[] };

const snap = () => h.emulator.state() as unknown as Snapshot;
const oneUser = (userName: string) => {
  const found = snap().users.filter((u) => u.userName.toLowerCase() === userName.toLowerCase());
  expect(found, `platform users named ${userName}`).toHaveLength(1);
  return found[0] as PUser;
};
const oneGroup = (displayName: string) => {
  const found = snap().groups.filter((g) => g.displayName === displayName);
  expect(found, `platform groups named ${displayName}`).toHaveLength(1);
  return found[0] as PGroup;
};
const platformIdOf = (userName: string) => oneUser(userName).id;
/** What Go's url.Values{"filter": ...}.Encode() writes. */
const goForm = (filter: string) => new URLSearchParams({ filter }).toString();
let n = 0;

/** A SCIM client of `source` that sends bodies as given, with the content type given. */
function client(source: string, contentType = "application/scim+json") {
  const auth = { Authorization: `Bearer ${source}-token` };
  const base = `/scim/v2/${source}`;
  return {
    get: (path: string) => h.http.get(`${base}${path}`).set(auth),
    delete: (path: string) => h.http.delete(`${base}${path}`).set(auth),
    send: (method: "post" | "put" | "patch", path: string, body: unknown) =>
      h.http[method](`${base}${path}`).set(auth).set("Content-Type", contentType).send(JSON.stringify(body)),
    patch: (path: string, Operations: unknown[]) =>
      h.http
        .patch(`${base}${path}`)
        .set(auth)
        .set("Content-Type", contentType)
        .send(JSON.stringify({ schemas: [PATCH_SCHEMA], Operations })),
  };
}

async function expectNoDeadLetters() {
  const status = await h.admin().get("/status");
  const sources = status.body.sources as Record<string, { deadLetters: number }>;
  for (const [source, counts] of Object.entries(sources)) {
    expect(counts.deadLetters, `${source}: ${JSON.stringify(status.body)}`).toBe(0);
  }
  expect(h.emulator.violations()).toEqual([]);
}

describe("Keycloak keycloak-scim2-storage (suvera)", () => {
  it("a user and a group provisioned, the user's email, name and phone changed, the group joined, left and renamed, the user deleted", async () => {
    const kc = client("keycloak");
    const userName = `kc.first+tag${++n}@example.com`;
    const lookUp = () => kc.get(`/Users?filter=userName+eq+%22${userName}%22`);
    expect((await lookUp()).body.totalResults).toBe(0);
    const created = await kc.send("post", "/Users", {
      schemas: [USER_SCHEMA],
      userName,
      name: { givenName: "Kari", familyName: "Nordmann" },
      emails: [{ type: "work", primary: true, value: userName }],
      externalId: "kc-user-1",
      active: true,
      groups: [],
      roles: [{ display: "offline_access", value: "role-1", type: "direct", primary: false }],
      displayName: "Kari Nordmann",
      addresses: [],
      phoneNumbers: [],
      ims: [],
      photos: [],
      entitlements: [],
      x509Certificates: [],
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const id = created.body.id as string;
    // The next full sync looks the user up again and must find it (not create it a second time).
    const again = await lookUp();
    expect(again.body.Resources.map((r: { id: string }) => r.id)).toEqual([id]);

    const groupName = `Sales EMEA ${++n}`;
    const byName = () => kc.get(`/Groups?filter=displayName+eq+%22${groupName.replace(/ /g, "%20")}%22`);
    expect((await byName()).body.totalResults).toBe(0);
    const group = await kc.send("post", "/Groups", { displayName: groupName });
    expect(group.status, JSON.stringify(group.body)).toBe(201);
    expect((await byName()).body.totalResults).toBe(1);
    const gid = group.body.id as string;
    const join = await kc.patch(`/Groups/${gid}`, [
      { op: "add", path: "members", value: [{ display: userName, value: id }] },
    ]);
    expect(join.status).toBe(204);

    const update = await kc.patch(`/Users/${id}`, [
      { op: "replace", path: "name", value: { givenName: "Kari", familyName: "Hansen" } },
      { op: "replace", path: "emails[type eq work].value", value: `kc.new${n}@example.com` },
      { op: "add", path: "phoneNumbers[type eq mobile].value", value: "+47 555 0100" },
    ]);
    expect(update.status, JSON.stringify(update.body)).toBe(200);
    await h.waitForIdle();
    const platformUser = oneUser(userName);
    expect(platformUser).toMatchObject({
      active: true,
      externalId: "kc-user-1",
      name: { givenName: "Kari", familyName: "Hansen" },
      emails: [{ value: `kc.new${n}@example.com`, type: "work", primary: true }],
    });
    expect(oneGroup(groupName).members).toEqual([platformUser.id]);

    const leave = await kc.patch(`/Groups/${gid}`, [{ op: "remove", path: `members[value eq "${id}"]` }]);
    expect(leave.status).toBe(204);
    // The rename: the group as read back, displayName changed, PUT whole.
    const read = await kc.get(`/Groups/${gid}`);
    const renamed = `${groupName} (all)`;
    const put = await kc.send("put", `/Groups/${gid}`, { ...read.body, displayName: renamed });
    expect(put.status, JSON.stringify(put.body)).toBe(200);
    expect(put.body.members ?? []).toEqual([]);
    await h.waitForIdle();
    expect(oneGroup(renamed)).toMatchObject({ members: [] });

    expect((await kc.delete(`/Users/${id}`)).status).toBe(204);
    await h.waitForIdle();
    expect(oneUser(userName).active).toBe(false);
    await expectNoDeadLetters();
  });
});

describe("Keycloak keycloak-scim (libre.sh, UnboundID's client): every change a full PUT", () => {
  it("members with relative $refs, a relative meta.location, roles, application/json: the platform follows each PUT", async () => {
    const kc = client("libre", "application/json");
    const mk = async (stem: string) => {
      const userName = `${stem}${++n}@example.com`;
      const res = await kc.send("post", "/Users", {
        schemas: [USER_SCHEMA],
        externalId: `kc-${stem}-${n}`,
        userName,
        displayName: stem,
        emails: [{ primary: true, value: userName }],
        active: true,
        roles: [],
      });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      return { id: res.body.id as string, userName };
    };
    const ada = await mk("ada");
    const bob = await mk("bob");
    const groupName = `libre-team-${++n}`;
    const ref = (u: { id: string }) => ({ value: u.id, $ref: `Users/${u.id}` });
    const created = await kc.send("post", "/Groups", {
      schemas: [GROUP_SCHEMA],
      externalId: `kc-group-${n}`,
      displayName: groupName,
      members: [ref(ada)],
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const gid = created.body.id as string;
    await h.waitForIdle();
    expect(oneGroup(groupName).members).toEqual([platformIdOf(ada.userName)]);

    const groupPut = await kc.send("put", `/Groups/${gid}`, {
      schemas: [GROUP_SCHEMA],
      id: gid,
      externalId: `kc-group-${n}`,
      displayName: groupName,
      members: [ref(bob)],
      meta: { location: `Groups/${gid}` },
    });
    expect(groupPut.status, JSON.stringify(groupPut.body)).toBe(200);
    const userPut = await kc.send("put", `/Users/${ada.id}`, {
      schemas: [USER_SCHEMA],
      id: ada.id,
      externalId: "kc-ada-renamed",
      userName: ada.userName,
      displayName: "Ada Lovelace",
      emails: [{ primary: true, value: ada.userName }],
      active: false,
      meta: { location: `Users/${ada.id}` },
      roles: [{ value: "analyst" }],
    });
    expect(userPut.status, JSON.stringify(userPut.body)).toBe(200);
    await h.waitForIdle();
    expect(oneGroup(groupName).members).toEqual([platformIdOf(bob.userName)]);
    expect(oneUser(ada.userName)).toMatchObject({
      active: false,
      displayName: "Ada Lovelace",
      externalId: "kc-ada-renamed",
    });
    await expectNoDeadLetters();
  });
});

describe("awslabs/ssosync against an AWS IAM Identity Center-style endpoint", () => {
  it("look-ups by form-encoded filters, blank names, membership by value lists, update and deactivation by PUT, delete", async () => {
    const aws = client("ssosync");
    const user = (first: string, last: string, email: string, active: boolean, id?: string) => ({
      schemas: [USER_SCHEMA],
      ...(id ? { id } : {}),
      userName: email,
      name: { familyName: last, givenName: first === "" ? " " : first },
      displayName: [first === "" ? " " : first, last].join(" "),
      active,
      emails: [{ value: email, type: "work", primary: true }],
      addresses: [{ type: "work" }],
    });
    const ann = `ann.lee${++n}@example.com`;
    const svc = `svc${++n}@example.com`;
    expect((await aws.get(`/Users?${goForm(`userName eq "${ann}"`)}`)).body.totalResults).toBe(0);
    const a = await aws.send("post", "/Users", user("Ann", "Lee", ann, true));
    expect(a.status, JSON.stringify(a.body)).toBe(201);
    expect(a.body.addresses).toBeUndefined(); // an address with nothing but its type is none
    const s = await aws.send("post", "/Users", user("", "", svc, true));
    expect(s.status, JSON.stringify(s.body)).toBe(201);
    const groupName = `AWS Admins ${++n}`;
    const g = await aws.send("post", "/Groups", {
      schemas: [GROUP_SCHEMA],
      displayName: groupName,
      members: [],
    });
    expect(g.status, JSON.stringify(g.body)).toBe(201);
    const found = await aws.get(`/Groups?${goForm(`displayName eq "${groupName}"`)}`);
    expect(found.body.Resources.map((r: { id: string }) => r.id)).toEqual([g.body.id]);

    const member = (uid: string) =>
      aws.get(`/Groups?${goForm(`id eq "${g.body.id}" and members eq "${uid}"`)}`);
    expect((await member(a.body.id)).body.totalResults).toBe(0);
    for (const uid of [a.body.id, s.body.id]) {
      const add = await aws.patch(`/Groups/${g.body.id}`, [
        { op: "add", path: "members", value: [{ value: uid }] },
      ]);
      expect(add.status).toBe(204);
    }
    expect((await member(a.body.id)).body.totalResults).toBe(1);
    const update = await aws.send(
      "put",
      `/Users/${a.body.id}`,
      user("Ann", "Lee-Smith", ann, false, a.body.id),
    );
    expect(update.status, JSON.stringify(update.body)).toBe(200);
    expect(update.body.id).toBe(a.body.id);
    await h.waitForIdle();
    expect(oneUser(ann)).toMatchObject({
      active: false,
      name: { givenName: "Ann", familyName: "Lee-Smith" },
    });
    expect(oneGroup(groupName).members.sort()).toEqual([platformIdOf(ann), platformIdOf(svc)].sort());

    const remove = await aws.patch(`/Groups/${g.body.id}`, [
      { op: "remove", path: "members", value: [{ value: s.body.id }] },
    ]);
    expect(remove.status).toBe(204);
    expect((await aws.delete(`/Users/${s.body.id}`)).status).toBe(204);
    await h.waitForIdle();
    expect(oneGroup(groupName).members).toEqual([platformIdOf(ann)]);
    expect(oneUser(svc).active).toBe(false);
    await expectNoDeadLetters();
  });
});

describe("Google Workspace auto-provisioning", () => {
  it("a paged look-up, a create naming the SCIM 1.1 and 2.0 schemas, suspension and restore by no-path replace", async () => {
    const gws = client("google");
    const userName = `g.user${++n}@example.com`;
    const lookUp = await gws.get(
      `/Users?filter=userName%20eq%20%22${encodeURIComponent(userName)}%22&startIndex=1`,
    );
    expect(lookUp.body).toMatchObject({ totalResults: 0, startIndex: 1, Resources: [] });
    const created = await gws.send("post", "/Users", {
      schemas: ["urn:scim:schemas:core:1.0", USER_SCHEMA],
      userName,
      emails: [{ primary: true, value: userName, type: "work" }],
      displayName: "G User",
      name: { givenName: "G", familyName: "User" },
      active: true,
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.headers.location).toBe(created.body.meta.location);
    const id = created.body.id as string;
    const suspend = await gws.patch(`/Users/${id}`, [{ op: "replace", value: { active: false } }]);
    expect(suspend.status).toBe(200);
    await h.waitForIdle();
    expect(oneUser(userName)).toMatchObject({ active: false, displayName: "G User" });
    const restore = await gws.patch(`/Users/${id}`, [{ op: "replace", value: { active: true } }]);
    expect(restore.body.active).toBe(true);
    await h.waitForIdle();
    expect(oneUser(userName).active).toBe(true);
    await expectNoDeadLetters();
  });
});

describe("JumpCloud: full PUTs that leave out what the user no longer has", () => {
  it("a PUT without name, emails and the enterprise extension clears them on the platform; a group PUT with its whole member list", async () => {
    const jc = client("jumpcloud");
    const userName = `jc.user${++n}@example.com`;
    const full = {
      schemas: [USER_SCHEMA, ENT],
      userName,
      name: { givenName: "Jo", familyName: "Cloud" },
      displayName: "Jo Cloud",
      emails: [{ value: userName, type: "work", primary: true }],
      active: true,
      externalId: `jc-${n}`,
      [ENT]: { department: "Ops", employeeNumber: "42" },
    };
    const created = await jc.send("post", "/Users", full);
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const other = await jc.send("post", "/Users", {
      ...full,
      userName: `jc.other${n}@example.com`,
      externalId: `jc-o-${n}`,
    });
    const groupName = `JumpCloud Ops ${n}`;
    const group = await jc.send("post", "/Groups", {
      schemas: [GROUP_SCHEMA],
      displayName: groupName,
      members: [{ value: created.body.id }],
    });
    await h.waitForIdle();
    expect(oneUser(userName)).toMatchObject({
      name: { givenName: "Jo", familyName: "Cloud" },
      [ENT]: { department: "Ops", employeeNumber: "42" },
    });

    const put = await jc.send("put", `/Users/${created.body.id}`, {
      schemas: [USER_SCHEMA],
      userName,
      displayName: "Jo Cloud",
      active: true,
      externalId: `jc-${n}`,
    });
    expect(put.status, JSON.stringify(put.body)).toBe(200);
    expect(put.body.name).toBeUndefined();
    expect(put.body.emails).toBeUndefined();
    expect(put.body[ENT]).toBeUndefined();
    const groupPut = await jc.send("put", `/Groups/${group.body.id}`, {
      schemas: [GROUP_SCHEMA],
      displayName: groupName,
      members: [{ value: other.body.id }, { value: created.body.id }],
    });
    expect(groupPut.status, JSON.stringify(groupPut.body)).toBe(200);
    await h.waitForIdle();
    const platform = oneUser(userName);
    expect(platform.name ?? {}).toEqual({});
    expect(platform.emails ?? []).toEqual([]);
    expect(platform[ENT] ?? {}).toEqual({});
    expect(platform).toMatchObject({ displayName: "Jo Cloud", active: true, externalId: `jc-${n}` });
    expect(oneGroup(groupName).members.sort()).toEqual(
      [platformIdOf(userName), platformIdOf(`jc.other${n}@example.com`)].sort(),
    );
    await expectNoDeadLetters();
  });
});

describe("a body that is not JSON reaches nothing", () => {
  it("a create sent as text/plain is a 415 and no platform user appears", async () => {
    const userName = `plain${++n}@example.com`;
    const res = await client("google", "text/plain").send("post", "/Users", {
      schemas: [USER_SCHEMA],
      userName,
    });
    expect(res.status).toBe(415);
    await h.waitForIdle();
    expect(snap().users.filter((u) => u.userName === userName)).toEqual([]);
  });
});
