import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { BadRequestError } from "../../../src/errors.js";
import { matchesFilter } from "../../../src/scim/filter-eval.js";
import { formatFilter } from "../../../src/scim/filter-format.js";
import {
  ANY_CORE_ATTRS,
  type AttrTable,
  comparedDef,
  parseAttrPath,
} from "../../../src/scim/attribute-schema.js";
import { coerceLiteral, parseFilter, trimsLiteral } from "../../../src/scim/filter-parser.js";
import type { CompareOp, FilterNode, FilterValue } from "../../../src/scim/filter-types.js";
import type { JsonObject } from "../../../src/scim/scim-types.js";

const ENT = "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User";
const PATHS = [
  "userName",
  "displayName",
  "name.givenName",
  "emails.value",
  "title",
  "active",
  `${ENT}:department`,
  "x",
];
const SUB_PATHS = ["type", "value", "primary"];
const BOOLEAN_PATHS = new Set(["active", "primary"]);
const OPS: CompareOp[] = ["eq", "ne", "co", "sw", "ew", "gt", "ge", "lt", "le"];

const value: fc.Arbitrary<FilterValue> = fc.oneof(
  fc.string({ unit: "binary" }),
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }).filter((d) => !Object.is(d, -0)),
  fc.boolean(),
  fc.constant(null),
);

function leaf(paths: string[]): fc.Arbitrary<FilterNode> {
  return fc.oneof(
    fc.record({ type: fc.constant("present" as const), path: fc.constantFrom(...paths) }),
    fc
      .record({
        type: fc.constant("compare" as const),
        path: fc.constantFrom(...paths),
        op: fc.constantFrom(...OPS),
        value,
      })
      // gt/ge/lt/le compare no boolean or null, and no boolean attribute (active, primary): the
      // parser refuses them (invalidFilter), so no valid filter formats to them.
      .filter(
        (n) =>
          !["gt", "ge", "lt", "le"].includes(n.op) ||
          (typeof n.value !== "boolean" && n.value !== null && !BOOLEAN_PATHS.has(n.path)),
      ),
  );
}

function tree(paths: string[], withValuePath: boolean): fc.Arbitrary<FilterNode> {
  return fc.letrec<{ node: FilterNode }>((tie) => ({
    node: fc.oneof(
      { depthSize: "small", withCrossShrink: true },
      leaf(paths),
      ...(withValuePath
        ? [
            fc.record({
              type: fc.constant("valuePath" as const),
              path: fc.constantFrom("emails", "addresses"),
              filter: tree(SUB_PATHS, false),
            }),
          ]
        : []),
      fc.record({ type: fc.constant("and" as const), left: tie("node"), right: tie("node") }),
      fc.record({ type: fc.constant("or" as const), left: tie("node"), right: tie("node") }),
      fc.record({ type: fc.constant("not" as const), expr: tie("node") }),
    ),
  })).node;
}

const resource: fc.Arbitrary<JsonObject> = fc.record({
  userName: fc.constantFrom("bjensen", "BJensen", "alice"),
  title: fc.constantFrom("", "Boss", "boss"),
  active: fc.boolean(),
  emails: fc.array(
    fc.record({
      value: fc.constantFrom("a@x.com", "B@x.com"),
      type: fc.constantFrom("work", "home"),
      primary: fc.boolean(),
    }),
    { maxLength: 3 },
  ),
  [ENT]: fc.record({ department: fc.constantFrom("Ops", "ops", "") }),
});

/**
 * The tree as the parser gives it back: every literal as the parser keeps it (coerced to its
 * attribute's type, and trimmed for an eq/ne on an attribute stored trimmed: the parser's own
 * decisions, coerceLiteral and trimsLiteral), everything else exactly as it was.
 */
function asParsed(node: FilterNode, table: AttrTable = ANY_CORE_ATTRS): FilterNode {
  switch (node.type) {
    case "compare": {
      const path = parseAttrPath(node.path, table);
      if (!path) throw new Error(`test path ${node.path} does not parse`);
      return { ...node, value: coerceLiteral(comparedDef(path), node.value, trimsLiteral(path, node.op)) };
    }
    case "valuePath":
      return {
        ...node,
        filter: asParsed(node.filter, parseAttrPath(node.path, table)?.def?.sub ?? new Map()),
      };
    case "and":
    case "or":
      return { ...node, left: asParsed(node.left, table), right: asParsed(node.right, table) };
    case "not":
      return { ...node, expr: asParsed(node.expr, table) };
    default:
      return node;
  }
}

describe("filter grammar properties", () => {
  it("parses what formatFilter writes back to the same tree, literals normalised as the parser does", () => {
    fc.assert(
      fc.property(tree(PATHS, true), (node) => {
        expect(parseFilter(formatFilter(node))).toEqual(asParsed(node));
      }),
      { numRuns: 500 },
    );
  });

  it("keeps every literal as written, except a name stored trimmed (trimmed) and a typed one (coerced)", () => {
    // The round trip above is only as strong as this: the normalisation touches nothing else.
    expect(asParsed({ type: "compare", path: "userName", op: "eq", value: "\t a \n" })).toMatchObject({
      value: "a",
    });
    expect(asParsed({ type: "compare", path: "displayName", op: "ne", value: " a " })).toMatchObject({
      value: "a",
    });
    for (const op of ["co", "sw", "ew", "gt", "ge", "lt", "le"] as const) {
      expect(asParsed({ type: "compare", path: "userName", op, value: "\t a \n" })).toMatchObject({
        value: "\t a \n",
      });
    }
    expect(asParsed({ type: "compare", path: "active", op: "eq", value: "True" })).toMatchObject({
      value: true,
    });
    for (const path of ["title", "name.givenName", "emails.value", `${ENT}:department`, "x"]) {
      expect(asParsed({ type: "compare", path, op: "eq", value: " \t a " })).toMatchObject({
        value: " \t a ",
      });
    }
  });

  it("never throws anything but invalidFilter on arbitrary text", () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 60 }), (text) => {
        try {
          parseFilter(text);
        } catch (err) {
          expect(err).toBeInstanceOf(BadRequestError);
          expect((err as BadRequestError).scimType).toBe("invalidFilter");
        }
      }),
      { numRuns: 1000 },
    );
  });

  it("evaluates not, and, or as boolean logic on any resource", () => {
    fc.assert(
      fc.property(tree(PATHS, true), tree(PATHS, true), resource, (a, b, r) => {
        const ma = matchesFilter(a, r);
        const mb = matchesFilter(b, r);
        expect(matchesFilter({ type: "not", expr: a }, r)).toBe(!ma);
        expect(matchesFilter({ type: "and", left: a, right: b }, r)).toBe(ma && mb);
        expect(matchesFilter({ type: "or", left: a, right: b }, r)).toBe(ma || mb);
      }),
      { numRuns: 300 },
    );
  });
});
