/**
 * Round k: PATCH semantics the earlier rounds left open (RFC 7644 §3.5.2), as pure functions.
 * - `add` to a multi-valued attribute no schema describes (a custom extension's list, kept whole
 *   under its URN): RFC 7644 §3.5.2.1 says a new value is added to a multi-valued attribute; the
 *   list the user holds was replaced by the values added.
 */
import { describe, expect, it } from "vitest";
import { normalizePatchRequest } from "../../../src/scim/dialects.js";
import { applyUserPatch } from "../../../src/scim/patch.js";
import type { JsonObject } from "../../../src/scim/scim-types.js";

const USER = "urn:ietf:params:scim:schemas:core:2.0:User";
const ACME = "urn:ietf:params:scim:schemas:extension:Acme:2.0:User";

const ops = (Operations: unknown[]) =>
  normalizePatchRequest({ schemas: ["urn:ietf:params:scim:api:messages:2.0:PatchOp"], Operations });

const user = (ext: JsonObject): JsonObject => ({
  schemas: [USER, ACME],
  userName: "ada@example.com",
  active: true,
  [ACME]: ext,
});

describe("add to a list of a custom extension (RFC 7644 §3.5.2.1: a new value is added)", () => {
  it("appends strings and objects by path, and keeps what is there", () => {
    const stored = user({ tags: ["a"], badges: [{ type: "x", value: "1" }], level: 3 });
    const out = applyUserPatch(
      stored,
      ops([
        { op: "add", path: `${ACME}:tags`, value: ["b"] },
        { op: "add", path: `${ACME}:badges`, value: [{ type: "y", value: "2" }] },
      ]),
    );
    expect(out[ACME]).toEqual({
      tags: ["a", "b"],
      badges: [
        { type: "x", value: "1" },
        { type: "y", value: "2" },
      ],
      level: 3,
    });
  });

  it("appends without a path too (a URN-prefixed key or the extension's object)", () => {
    const stored = user({ tags: ["a"] });
    expect(applyUserPatch(stored, ops([{ op: "add", value: { [`${ACME}:tags`]: ["b"] } }]))[ACME]).toEqual({
      tags: ["a", "b"],
    });
    expect(applyUserPatch(stored, ops([{ op: "add", value: { [ACME]: { tags: ["c"] } } }]))[ACME]).toEqual({
      tags: ["a", "c"],
    });
  });

  it("adds a single value to the list, does not add a value twice, and [] or null adds nothing", () => {
    const stored = user({ tags: ["a", "b"] });
    expect(applyUserPatch(stored, ops([{ op: "add", path: `${ACME}:tags`, value: "c" }]))[ACME]).toEqual({
      tags: ["a", "b", "c"],
    });
    expect(applyUserPatch(stored, ops([{ op: "add", path: `${ACME}:tags`, value: ["b"] }]))[ACME]).toEqual({
      tags: ["a", "b"],
    });
    for (const value of [[], null]) {
      expect(applyUserPatch(stored, ops([{ op: "add", path: `${ACME}:tags`, value }]))[ACME]).toEqual({
        tags: ["a", "b"],
      });
    }
  });

  it("replace still sets the list, and add sets an attribute the user does not have or holds one value of", () => {
    const stored = user({ tags: ["a"], level: 3 });
    const out = applyUserPatch(
      stored,
      ops([
        { op: "replace", path: `${ACME}:tags`, value: ["z"] },
        { op: "add", path: `${ACME}:sites`, value: ["berlin"] },
        { op: "add", path: `${ACME}:level`, value: 4 },
      ]),
    );
    expect(out[ACME]).toEqual({ tags: ["z"], sites: ["berlin"], level: 4 });
  });
});
