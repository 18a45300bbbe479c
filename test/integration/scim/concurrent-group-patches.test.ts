import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ScimTestApp, createScimTestApp } from "../../helpers/scim-test-app.js";

/**
 * Entra provisions a group's memberships in parallel: many PATCHes to one group at once, each
 * adding a different user. Every one must succeed (no 503 "Too many concurrent writes"), and the
 * group must end with all of them (redis-directory-store.ts, the read-modify-write retry).
 */
const USER = "urn:ietf:params:scim:schemas:core:2.0:User";
const GROUP = "urn:ietf:params:scim:schemas:core:2.0:Group";
const PATCH = "urn:ietf:params:scim:api:messages:2.0:PatchOp";
const N = 30;

let t: ScimTestApp;
const ids: string[] = [];
beforeAll(async () => {
  t = await createScimTestApp("concurrent-patches");
  for (let i = 0; i < N; i++) {
    const res = await t.request
      .post("/scim/v2/entra/Users")
      .set(t.entra)
      .send({ schemas: [USER], userName: `parallel${i}@example.com` });
    expect(res.status).toBe(201);
    ids.push(res.body.id);
  }
});
afterAll(async () => {
  await t.close();
});

describe("concurrent PATCHes to one group", () => {
  it(`${N} at once, each adding a different member: all succeed, all members kept`, async () => {
    const created = await t.request
      .post("/scim/v2/entra/Groups")
      .set(t.entra)
      .send({ schemas: [GROUP], displayName: "Parallel provisioning" });
    expect(created.status).toBe(201);
    const gid = created.body.id as string;

    const answers = await Promise.all(
      ids.map((uid) =>
        t.request
          .patch(`/scim/v2/entra/Groups/${gid}`)
          .set(t.entra)
          .send({ schemas: [PATCH], Operations: [{ op: "add", path: "members", value: [{ value: uid }] }] }),
      ),
    );
    const statuses = answers.map((res) => res.status);
    expect(statuses.filter((s) => s !== 204)).toEqual([]);

    const group = await t.request.get(`/scim/v2/entra/Groups/${gid}`).set(t.entra);
    expect(group.status).toBe(200);
    const members = (group.body.members as Array<{ value: string }>).map((m) => m.value).sort();
    expect(members).toEqual([...ids].sort());
    expect(group.body.meta.version).toBe(`W/"${1 + N}"`);
  });
});
