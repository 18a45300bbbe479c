/**
 * Adversarial review (round n2r) of OneLogin's enterprise alias (intake only, real Redis).
 * `urn:scim:schemas:extension:enterprise:2.0` (attribute-schema.ts) became a known URN, and a known
 * URN is split off a path as its prefix. A path under another extension whose URN starts with it,
 * `urn:scim:schemas:extension:enterprise:2.0:User` (kept as an unknown extension, one by its form),
 * lost its split: `<that urn>:department` was no attribute path any more, so a PATCH, filter or
 * `attributes=` on what a POST had stored was a 400.
 */
import { describe, expect, it } from "vitest";
import { scimSourceSuite } from "../helpers/scim-test-app.js";

const USER = "urn:ietf:params:scim:schemas:core:2.0:User";
const PATCH = "urn:ietf:params:scim:api:messages:2.0:PatchOp";

let n = 0;
const unique = (stem: string) => `${stem}.n2r-${++n}@example.com`;
const q = (filter: string) => encodeURIComponent(filter);

const suite = scimSourceSuite("conformance-onelogin-urn-prefix-n2r", "okta");
const { get, send } = suite;
const createUser = (body: Record<string, unknown>) => suite.created("/Users", { schemas: [USER], ...body });
/** The ids of the users `filter` lists, sorted. */
const ids = async (filter: string) => (await suite.ids(filter)).sort();

describe("a path under `urn:scim:schemas:extension:enterprise:2.0:User` (an unknown extension)", () => {
  const EXT = "urn:scim:schemas:extension:enterprise:2.0:User";

  it("is read in a filter, a PATCH path and `attributes=` as the body stored it", async () => {
    const user = await createUser({
      schemas: [USER, EXT],
      userName: unique("ext"),
      [EXT]: { department: unique("dept") },
    });
    const dept = (user[EXT] as { department: string }).department;
    expect(await ids(`${EXT}:department eq "${dept}"`)).toEqual([user.id]);
    const res = await send("patch", `/Users/${user.id}`, {
      schemas: [PATCH],
      Operations: [{ op: "replace", path: `${EXT}:department`, value: "Ops" }],
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body[EXT]).toEqual({ department: "Ops" });
    const projected = await get(`/Users/${user.id}?attributes=${q(`${EXT}:department`)}`);
    expect(projected.status, JSON.stringify(projected.body)).toBe(200);
    expect(projected.body[EXT]).toEqual({ department: "Ops" });
  });
});
