/**
 * Probes (round n) of the SCIM intake as PingOne's and PingFederate's SCIM provisioners send
 * requests (intake only, real Redis). PingOne's "SCIM filter expressions" page
 * (docs.pingidentity.com/pingone/integrations/p1_scim_filter_expressions.html) gives the
 * admin-written "User Filter Expression" that matches an existing user before a create, with `%s`
 * for the user identifier (userName or workEmail): `username Eq "%s"` (pinned in
 * test/acceptance/idp-probes-l.test.ts) and `email Co "%s"`. RFC 7643 §4.1.2 has no `email`: a
 * User's addresses are `emails`. Answering that look-up with an empty list made the provisioner
 * create a user that exists (409 uniqueness on every sync of that user).
 *
 * PingFederate's SCIM Provisioner (docs.pingidentity.com/integrations/scim/pf_scim_connector.html,
 * "Filtering support ... Groups: the connector allows group filtering by retrieving all groups and
 * finding a match") sends no group filter: it reads every page of `GET /Groups`.
 */
import { describe, expect, it } from "vitest";
import { scimSourceSuite } from "../helpers/scim-test-app.js";

const USER = "urn:ietf:params:scim:schemas:core:2.0:User";
const GROUP = "urn:ietf:params:scim:schemas:core:2.0:Group";

let n = 0;
const unique = (stem: string) => `${stem}.n${++n}@example.com`;
const q = (filter: string) => encodeURIComponent(filter);

const suite = scimSourceSuite("conformance-pingone-probes-n", "okta");
const { get, send } = suite;

const createUser = (body: Record<string, unknown>) =>
  suite.created<{ id: string; userName: string }>("/Users", { schemas: [USER], ...body });

async function ids(path: string): Promise<string[]> {
  const res = await get(path);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return (res.body.Resources as { id: string }[]).map((r) => r.id);
}

describe('PingOne\'s documented user filter expression `email Co "%s"`', () => {
  it("finds the user whose email holds the identifier, as `emails co` does (any case of name, operator and value)", async () => {
    const work = unique("pat.work");
    const user = await createUser({
      userName: unique("pat"),
      emails: [
        { value: work, type: "work", primary: true },
        { value: unique("pat.home"), type: "home" },
      ],
    });
    await createUser({ userName: unique("other"), emails: [{ value: unique("other"), type: "work" }] });
    expect(await ids(`/Users?filter=${q(`email Co "${work}"`)}`)).toEqual([user.id]);
    expect(await ids(`/Users?filter=${q(`EMAIL co "${work.toUpperCase()}"`)}`)).toEqual([user.id]);
    expect(await ids(`/Users?filter=${q(`emails Co "${work}"`)}`)).toEqual([user.id]);
  });

  it("`email eq`, `email.value eq` and `email pr` read `emails` too; a form-encoded expression the same", async () => {
    const address = unique("lee");
    const user = await createUser({
      userName: unique("lee.login"),
      emails: [{ value: address, type: "work" }],
    });
    expect(await ids(`/Users?filter=${q(`email eq "${address}"`)}`)).toEqual([user.id]);
    expect(await ids(`/Users?filter=${q(`email.value eq "${address}"`)}`)).toEqual([user.id]);
    expect(await ids(`/Users?filter=${q(`email pr and userName eq "${user.userName}"`)}`)).toEqual([user.id]);
    const form = `email+Co+%22${encodeURIComponent(address)}%22`;
    expect(await ids(`/Users?filter=${form}`)).toEqual([user.id]);
  });

  it("an identifier no user's email holds is a 200 with an empty list (create follows), not an error", async () => {
    await createUser({ userName: unique("someone"), emails: [{ value: unique("someone"), type: "work" }] });
    const res = await get(`/Users?filter=${q(`email Co "${unique("nobody")}"`)}`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ totalResults: 0, Resources: [] });
  });

  it("POST /Users/.search with the same expression finds the user (RFC 7644 §3.4.3)", async () => {
    const address = unique("search");
    const user = await createUser({ userName: unique("search.login"), emails: [{ value: address }] });
    const res = await send("post", "/Users/.search", {
      schemas: ["urn:ietf:params:scim:api:messages:2.0:SearchRequest"],
      filter: `email Co "${address}"`,
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect((res.body.Resources as { id: string }[]).map((r) => r.id)).toEqual([user.id]);
  });

  it("`email` in a value filter or on Groups is not rewritten: groups have no emails", async () => {
    const group = await send("post", "/Groups", {
      schemas: [GROUP],
      displayName: unique("Ping group"),
    });
    expect(group.status).toBe(201);
    expect(await ids(`/Groups?filter=${q('email co "example.com"')}`)).toEqual([]);
  });
});

describe("PingFederate's group matching: every page of `GET /Groups`, no filter", () => {
  it("pages by itemsPerPage list each group once, with its members, and totalResults counts them all", async () => {
    const member = await createUser({ userName: unique("pf.member") });
    const names = Array.from({ length: 5 }, () => unique("PF group"));
    const created: string[] = [];
    for (const displayName of names) {
      const res = await send("post", "/Groups", {
        schemas: [GROUP],
        displayName,
        members: [{ value: member.id }],
      });
      expect(res.status).toBe(201);
      created.push(res.body.id as string);
    }
    const seen: Array<{ id: string; displayName: string; members: Array<{ value: string }> }> = [];
    let total = Number.POSITIVE_INFINITY;
    for (let startIndex = 1; startIndex <= total; ) {
      const res = await get(`/Groups?startIndex=${startIndex}&count=2`);
      expect(res.status).toBe(200);
      total = res.body.totalResults as number;
      const page = res.body.Resources as typeof seen;
      expect(page.length).toBe(res.body.itemsPerPage);
      if (page.length === 0) break;
      seen.push(...page);
      startIndex += page.length;
    }
    expect(seen.length).toBe(total);
    expect(new Set(seen.map((g) => g.id)).size).toBe(seen.length);
    for (const [i, id] of created.entries()) {
      const group = seen.find((g) => g.id === id);
      expect(group?.displayName).toBe(names[i]);
      expect(group?.members.map((m) => m.value)).toEqual([member.id]);
    }
  });
});
