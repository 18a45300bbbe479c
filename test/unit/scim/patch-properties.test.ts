import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { BadRequestError } from "../../../src/errors.js";
import { toCanonicalUser } from "../../../src/scim/canonical-resource.js";
import { applyGroupPatch, applyUserPatch } from "../../../src/scim/patch.js";
import type { Json, JsonObject, PatchOperation } from "../../../src/scim/scim-types.js";

const ENT = "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User";
const PATHS = [
  "title",
  "active",
  "userName",
  "name",
  "name.givenName",
  "emails",
  'emails[type eq "work"]',
  'emails[type eq "work"].value',
  'emails[type eq "home" and primary eq true].value',
  'emails[value co "x"]',
  'addresses[type eq "work"].country',
  `${ENT}:department`,
  `${ENT}:manager`,
  ENT,
  "id",
  "members",
  "bad path[",
];

const anyValue: fc.Arbitrary<Json> = fc.oneof(
  fc.string({ maxLength: 8 }),
  fc.boolean(),
  fc.constantFrom<Json>("True", "False", null, 3),
  fc.constant<Json>({ givenName: "G" }),
  fc.constant<Json>([{ value: "v@x.com", type: "work" }]),
  fc.constant<Json>({ value: "m1" }),
  fc.constant<Json>({ department: "Ops" }),
);

const operation: fc.Arbitrary<PatchOperation> = fc.oneof(
  fc.record(
    {
      op: fc.constantFrom("add", "remove", "replace") as fc.Arbitrary<PatchOperation["op"]>,
      path: fc.constantFrom(...PATHS),
      value: anyValue,
    },
    { requiredKeys: ["op", "path"] },
  ),
  fc.record({
    op: fc.constantFrom("add", "replace") as fc.Arbitrary<PatchOperation["op"]>,
    value: fc.dictionary(fc.constantFrom("active", "title", "name.familyName", `${ENT}:division`), anyValue, {
      maxKeys: 3,
    }),
  }),
);

const user = (): JsonObject => ({
  schemas: ["urn:ietf:params:scim:schemas:core:2.0:User"],
  id: "u1",
  userName: "bjensen",
  active: true,
  emails: [{ value: "b@x.com", type: "work", primary: true }],
});

describe("PATCH properties (RFC 7644 §3.5.2: all or nothing)", () => {
  it("either returns a valid canonical user or throws BadRequestError, never touching the input", () => {
    fc.assert(
      fc.property(fc.array(operation, { maxLength: 6 }), (ops) => {
        const input = user();
        const before = JSON.stringify(input);
        try {
          const out = applyUserPatch(input, ops);
          expect(toCanonicalUser(out)).toEqual(out); // already canonical: a fixed point
          expect(typeof out.userName).toBe("string");
          expect(typeof out.active).toBe("boolean");
        } catch (err) {
          expect(err).toBeInstanceOf(BadRequestError);
        }
        expect(JSON.stringify(input)).toBe(before);
      }),
      { numRuns: 1000 },
    );
  });

  it("computes membership changes whose add and remove lists are disjoint and match a naive replay", () => {
    const memberOp = fc.record({
      op: fc.constantFrom("add", "remove", "replace") as fc.Arbitrary<PatchOperation["op"]>,
      ids: fc.uniqueArray(fc.constantFrom("a", "b", "c", "d", "e"), { maxLength: 3 }),
    });
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.constantFrom("a", "b", "c", "d", "e")),
        fc.array(memberOp, { maxLength: 6 }),
        (current, steps) => {
          const ops: PatchOperation[] = steps.map((s) => ({
            op: s.op,
            path: "members",
            value: s.ids.map((value) => ({ value })),
          }));
          // Naive replay on the full member set.
          const expected = new Set(current);
          for (const s of steps) {
            if (s.op === "replace") expected.clear();
            for (const id of s.ids) s.op === "remove" ? expected.delete(id) : expected.add(id);
          }
          const stored = current.map((value) => ({ value, type: "User" as const }));
          const { members } = applyGroupPatch({ displayName: "G" }, stored, ops);
          const add = members.add ?? [];
          const remove = members.remove ?? [];
          expect(add.filter((id) => remove.includes(id))).toEqual([]);
          const result = new Set(members.replace ?? current);
          for (const id of add) result.add(id);
          for (const id of remove) result.delete(id);
          expect([...result].sort()).toEqual([...expected].sort());
        },
      ),
      { numRuns: 500 },
    );
  });
});
