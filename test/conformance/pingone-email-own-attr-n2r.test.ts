/**
 * Adversarial review (round n2r) of PingOne's `email` alias (intake only, real Redis). The alias
 * (filter-parser.ts, userFilterPath) read every `email` of a Users filter as `emails`. A user that
 * carries an attribute of its own named `email` (a flat attribute some HR scripts and custom
 * connectors send beside or instead of `emails`; the bridge keeps unknown attributes) was found by
 * `email eq "<address>"` before; it no longer was, so a look-up before a create answered an empty
 * list.
 */
import { describe, expect, it } from "vitest";
import { type ScimResource as Resource, scimSourceSuite } from "../helpers/scim-test-app.js";

const USER = "urn:ietf:params:scim:schemas:core:2.0:User";

let n = 0;
const unique = (stem: string) => `${stem}.n2r-${++n}@example.com`;

const suite = scimSourceSuite("conformance-pingone-email-own-attr-n2r", "okta");
const { send } = suite;
const createUser = (body: Record<string, unknown>) => suite.created("/Users", { schemas: [USER], ...body });
/** The ids of the users `filter` lists, sorted. */
const ids = async (filter: string) => (await suite.ids(filter)).sort();

describe("a Users filter on `email` when the user has an attribute of that name", () => {
  it("finds the user by its own `email`, as before the PingOne alias, and by `emails` as well", async () => {
    const flat = unique("flat");
    const own = await createUser({ userName: unique("flat.login"), email: flat });
    const listed = unique("listed");
    const ping = await createUser({ userName: unique("listed.login"), emails: [{ value: listed }] });
    expect(await ids(`email eq "${flat}"`)).toEqual([own.id]);
    expect(await ids(`email co "${flat.toUpperCase()}"`)).toEqual([own.id]);
    expect(await ids(`email eq "${listed}"`)).toEqual([ping.id]);
    const search = await send("post", "/Users/.search", { filter: `email eq "${flat}"` });
    expect(search.status, JSON.stringify(search.body)).toBe(200);
    expect((search.body.Resources as Resource[]).map((r) => r.id)).toEqual([own.id]);
  });

  it("`ne` excludes a user matching either, `pr` finds a user having either", async () => {
    const flat = unique("ne.flat");
    const own = await createUser({ userName: unique("ne.own"), email: flat });
    const ping = await createUser({ userName: unique("ne.ping"), emails: [{ value: flat }] });
    const both = `userName eq "${own.userName}" or userName eq "${ping.userName}"`;
    expect(await ids(`(${both}) and email ne "${flat}"`)).toEqual([]);
    expect(await ids(`(${both}) and not (email eq "${flat}")`)).toEqual([]);
    expect(await ids(`(${both}) and email pr`)).toEqual([own.id, ping.id].sort());
  });
});
