/**
 * Review (round o) of the foreign-core-URN change and of 784d992, which dropped the dialects.ts part
 * as dead code: expandNoPathValue reads every object under a core URN as a whole extension, so its
 * isCoreUrnObject branch (flattening the object into the resource's own attributes) is never
 * reached. A key qualified by an extension URN inside that object then becomes
 * `<core URN>:<extension URN>:<attr>`, stored under a made-up extension
 * "urn:...:core:2.0:User:urn:...:enterprise:2.0:User". A POST or PUT of the same body
 * (canonical-resource.ts, build) reads it as the enterprise attribute.
 */
import { describe, expect, it } from "vitest";
import { toCanonicalUser } from "../../../src/scim/canonical-resource.js";
import { normalizePatchRequest } from "../../../src/scim/dialects.js";
import { applyUserPatch } from "../../../src/scim/patch.js";

const USER = "urn:ietf:params:scim:schemas:core:2.0:User";
const ENTERPRISE = "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User";
const stored = { schemas: [USER], userName: "ada", active: true };

describe("a no-path PATCH value under the User's own core URN (review-o)", () => {
  for (const [label, inner] of [
    ["a URN-qualified key", { [`${ENTERPRISE}:department`]: "R&D" }],
    ["the extension's object", { [ENTERPRISE]: { department: "R&D" } }],
  ] as const) {
    it(`holding ${label} sets the enterprise attribute, as a POST body does`, () => {
      expect(toCanonicalUser({ userName: "ada", [USER]: inner })[ENTERPRISE]).toEqual({ department: "R&D" });
      const ops = normalizePatchRequest({ Operations: [{ op: "replace", value: { [USER]: inner } }] });
      const patched = applyUserPatch(stored, ops) as Record<string, unknown>;
      expect(Object.keys(patched).filter((key) => key.startsWith(`${USER}:`))).toEqual([]);
      expect(patched[ENTERPRISE]).toEqual({ department: "R&D" });
    });
  }
});
