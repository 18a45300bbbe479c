import { BadRequestError } from "../errors.js";
import {
  type AttrDef,
  type AttrPath,
  type AttrTable,
  comparedDef,
  coreAttrsOf,
  formatAttrPath,
  isStoredTrimmed,
  parseAttrPath,
} from "./attribute-schema.js";
import { coerceBoolean, userFilterPath } from "./dialects.js";
import type { CompareOp, FilterNode, FilterValue } from "./filter-types.js";
import { filterProblem } from "./filter-validate.js";

/**
 * A recursive-descent parser for the filter grammar of RFC 7644 §3.4.2.2 (figure 1):
 *
 *   FILTER    = attrExp / logExp / valuePath / *1"not" "(" FILTER ")"
 *   valuePath = attrPath "[" valFilter "]"
 *   attrExp   = (attrPath SP "pr") / (attrPath SP compareOp SP compValue)
 *
 * Precedence is not > and > or (§3.4.2.2 "Filters MUST be evaluated using ... precedence").
 * Operators, keywords and attribute names are case-insensitive; attribute names come out in the
 * schema's case and a core-schema URN prefix is dropped (`urn:...:core:2.0:User:userName` ->
 * `userName`); extension paths keep their canonical URN prefix. A comparison's literal comes out
 * in its attribute's type where it can (coerceLiteral), and, for `eq`/`ne` on an attribute stored
 * trimmed (userName, a Group's displayName), trimmed (trimsLiteral), so every reader of the tree
 * (the evaluator, the directory's index lookups) sees the same value.
 */

const MAX_LENGTH = 10_000;
const MAX_DEPTH = 50;
const COMPARE_OPS = new Set<string>(["eq", "ne", "co", "sw", "ew", "gt", "ge", "lt", "le"]);
const ORDERING_OPS = new Set<string>(["gt", "ge", "lt", "le"]);
/** The operators that compare a whole name: the only ones whose literal is trimmed (trimsLiteral). */
const WHOLE_VALUE_OPS = new Set<string>(["eq", "ne"]);
const JSON_NUMBER = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?$/;

type TokenKind = "(" | ")" | "[" | "]" | "string" | "word";
interface Token {
  kind: TokenKind;
  text: string;
  pos: number;
}

function fail(message: string): never {
  throw new BadRequestError(`Invalid filter: ${message}`, "invalidFilter");
}

/**
 * `lenient` (the value filter of a PATCH path, parsePatchPath): a string in single quotes is read
 * as a string, as GitHub's SCIM documentation writes Entra ID's `emails[type eq 'work'].value`.
 */
function tokenize(text: string, lenient = false): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < text.length) {
    const c = text[i]!;
    if (c === " " || c === "\t" || c === "\n" || c === "\r") {
      i++;
    } else if (lenient && c === "'") {
      const end = text.indexOf("'", i + 1);
      if (end < 0) fail(`unterminated string starting at position ${i + 1}`);
      tokens.push({ kind: "string", text: JSON.stringify(text.slice(i + 1, end)), pos: i });
      i = end + 1;
    } else if (c === "(" || c === ")" || c === "[" || c === "]") {
      tokens.push({ kind: c, text: c, pos: i });
      i++;
    } else if (c === '"') {
      let j = i + 1;
      while (j < text.length && text[j] !== '"') j += text[j] === "\\" ? 2 : 1;
      if (j >= text.length) fail(`unterminated string starting at position ${i + 1}`);
      tokens.push({ kind: "string", text: text.slice(i, j + 1), pos: i });
      i = j + 1;
    } else {
      let j = i;
      while (j < text.length && !' \t\n\r()[]"'.includes(text[j]!) && !(lenient && text[j] === "'")) j++;
      tokens.push({ kind: "word", text: text.slice(i, j), pos: i });
      i = j;
    }
  }
  return tokens;
}

type ResourceType = "User" | "Group";

/**
 * Whether the literal of `<p> <op> "..."` is trimmed: only for `eq` and `ne` on an attribute intake
 * stores trimmed (isStoredTrimmed: userName, a Group's displayName). Those compare the whole name,
 * and `userName eq " ada@x.com "` is the lookup-before-create of the name intake would store as
 * "ada@x.com". Every other operator compares the literal as sent with the stored name: a stored
 * name has no surrounding whitespace, so `co " "` matches the names with an inner space (trimmed
 * it would be `co ""`, every name), `sw " x"` and `ew "x "` match no name (trimmed, they matched
 * "x..." and "...x"), and gt/ge/lt/le order against the literal as written (a range bound, not a
 * name: trimming it would move the bound).
 */
export function trimsLiteral(p: AttrPath, op: CompareOp, resourceType?: ResourceType): boolean {
  return WHOLE_VALUE_OPS.has(op) && isStoredTrimmed(p, resourceType);
}

class Parser {
  private i = 0;
  private depth = 0;
  constructor(
    private readonly tokens: Token[],
    private readonly resourceType?: ResourceType,
    /** Bare words are string literals (`type eq work`): see parseFilterWithin's `lenientLiterals`. */
    private readonly lenient = false,
  ) {}

  parse(table: AttrTable, inValuePath: boolean): FilterNode {
    if (this.tokens.length === 0) fail("the filter is empty");
    const node = this.or(table, inValuePath);
    const extra = this.peek();
    if (extra) fail(`unexpected "${extra.text}" at position ${extra.pos + 1}`);
    return node;
  }

  private peek(): Token | undefined {
    return this.tokens[this.i];
  }

  private next(what: string): Token {
    const t = this.tokens[this.i++];
    if (!t) fail(`expected ${what} but the filter ended`);
    return t;
  }

  private keyword(word: string): boolean {
    const t = this.peek();
    if (t?.kind === "word" && t.text.toLowerCase() === word) {
      this.i++;
      return true;
    }
    return false;
  }

  private or(table: AttrTable, inValuePath: boolean): FilterNode {
    let left = this.and(table, inValuePath);
    while (this.keyword("or")) left = { type: "or", left, right: this.and(table, inValuePath) };
    return left;
  }

  private and(table: AttrTable, inValuePath: boolean): FilterNode {
    let left = this.unary(table, inValuePath);
    while (this.keyword("and")) left = { type: "and", left, right: this.unary(table, inValuePath) };
    return left;
  }

  private unary(table: AttrTable, inValuePath: boolean): FilterNode {
    const t = this.peek();
    if (t?.kind === "word" && t.text.toLowerCase() === "not" && this.tokens[this.i + 1]?.kind === "(") {
      this.i++;
      return { type: "not", expr: this.group(table, inValuePath) };
    }
    if (t?.kind === "(") return this.group(table, inValuePath);
    return this.attrExp(table, inValuePath);
  }

  private group(table: AttrTable, inValuePath: boolean): FilterNode {
    const open = this.next('"("');
    if (open.kind !== "(") fail(`expected "(" at position ${open.pos + 1}`);
    if (++this.depth > MAX_DEPTH) fail("too deeply nested");
    const inner = this.or(table, inValuePath);
    this.depth--;
    const close = this.next('")"');
    if (close.kind !== ")") fail(`expected ")" at position ${close.pos + 1} but found "${close.text}"`);
    return inner;
  }

  private attrExp(table: AttrTable, inValuePath: boolean): FilterNode {
    const t = this.next("an attribute path");
    if (t.kind !== "word") fail(`expected an attribute path at position ${t.pos + 1} but found "${t.text}"`);
    // PingOne's `email Co "%s"` on Users (userFilterPath); a value filter's names are sub-attributes.
    const name = this.resourceType === "User" && !inValuePath ? userFilterPath(t.text) : t.text;
    const parsed = parseAttrPath(name, table);
    if (!parsed) {
      const of = this.resourceType && !inValuePath ? ` of a ${this.resourceType}` : "";
      fail(`"${t.text}" at position ${t.pos + 1} is not a valid attribute path${of}`);
    }
    const path = formatAttrPath(parsed);
    const after = this.peek();
    if (name !== t.text && after?.kind !== "[") return this.eitherOperation(t.text, parsed, table);
    if (after?.kind === "[") {
      if (inValuePath) fail(`nested value paths are not allowed (position ${after.pos + 1})`);
      if (parsed.sub !== undefined) fail(`a value path must name a multi-valued attribute, not "${t.text}"`);
      this.i++;
      const filter = this.or(parsed.def?.sub ?? new Map(), true);
      const close = this.next('"]"');
      if (close.kind !== "]") fail(`expected "]" at position ${close.pos + 1} but found "${close.text}"`);
      const trailing = this.peek();
      if (trailing?.kind === "word" && trailing.text.startsWith(".")) {
        // `emails[type eq "work"].value eq "x"`: the PATCH path form some clients also send as a
        // filter. Read as `emails[type eq "work" and value eq "x"]` (one element meets both).
        this.i++;
        const subTable = parsed.def?.sub ?? new Map();
        const sub = parseAttrPath(trailing.text.slice(1), subTable);
        if (!sub || sub.sub !== undefined) {
          fail(`"${trailing.text}" at position ${trailing.pos + 1} is not a sub-attribute of "${t.text}"`);
        }
        const condition = this.operation(sub, trailing.text);
        return { type: "valuePath", path, filter: { type: "and", left: filter, right: condition } };
      }
      return { type: "valuePath", path, filter };
    }
    return this.operation(parsed, t.text);
  }

  /**
   * The operation after `email` (PingOne's alias of `emails`, userFilterPath) applied to a User's
   * own attribute of that name (kept as sent, and found by it before the alias) and to `emails`
   * (aliasJoin).
   */
  private eitherOperation(shown: string, aliased: AttrPath, table: AttrTable): FilterNode {
    const own = parseAttrPath(shown, table) ?? { attr: shown };
    const start = this.i;
    const ownNode = this.operation(own, shown);
    this.i = start;
    const aliasNode = this.operation(aliased, shown);
    return { type: aliasJoin(ownNode), left: ownNode, right: aliasNode };
  }

  /** `pr`, or a comparison operator and its value, after an attribute path. */
  private operation(parsed: AttrPath, shown: string): FilterNode {
    const path = formatAttrPath(parsed);
    const opToken = this.next(`an operator after "${shown}"`);
    const op = opToken.text.toLowerCase();
    if (opToken.kind === "word" && op === "pr") return { type: "present", path };
    if (opToken.kind !== "word" || !COMPARE_OPS.has(op)) {
      fail(`unknown operator "${opToken.text}" at position ${opToken.pos + 1}`);
    }
    const value = this.compValue();
    if (ORDERING_OPS.has(op) && (typeof value === "boolean" || value === null)) {
      fail(`"${op}" cannot compare with ${String(value)} (RFC 7644 §3.4.2.2)`);
    }
    const compareOp = op as CompareOp;
    const trim = trimsLiteral(parsed, compareOp, this.resourceType);
    return { type: "compare", path, op: compareOp, value: coerceLiteral(comparedDef(parsed), value, trim) };
  }

  private compValue(): FilterValue {
    const t = this.next("a value");
    if (t.kind === "string") {
      try {
        return JSON.parse(t.text) as string;
      } catch {
        fail(`bad escape in string at position ${t.pos + 1}`);
      }
    }
    if (t.kind === "word") {
      const lower = t.text.toLowerCase();
      if (lower === "true") return true;
      if (lower === "false") return false;
      if (lower === "null") return null;
      if (JSON_NUMBER.test(t.text)) return Number(t.text);
      if (this.lenient) return t.text;
    }
    fail(
      `expected a value (string, number, true, false or null) at position ${t.pos + 1}, found "${t.text}"`,
    );
  }
}

/**
 * How the two readings of `email` (eitherOperation) combine: a condition that holds when the
 * address is absent or different (`ne`, `eq null`) must hold of both, any other of either; so
 * `email ne "x"` stays `not (email eq "x")`.
 */
function aliasJoin(node: FilterNode): "and" | "or" {
  return node.type === "compare" && (node.op === "ne" || (node.op === "eq" && node.value === null))
    ? "and"
    : "or";
}

/**
 * A string literal in the type of the attribute it is compared with (RFC 7643 §2.3): Entra ID
 * sends booleans as strings (`active eq "True"`), and a number-typed attribute may come with a
 * numeric string. Booleans are read as at intake (coerceBoolean). A literal that cannot be
 * coerced (`active eq "maybe"`) is kept: it equals no value of that type, so `eq` matches
 * nothing and `ne` everything, as for any comparison of different types.
 *
 * `storedTrimmed` (trimsLiteral): an `eq`/`ne` on an attribute kept with surrounding whitespace
 * trimmed (userName, a Group's displayName), so the literal is trimmed the same way (String#trim,
 * as intake): an identity provider that looks up `userName eq " ada@x.com "` before creating finds
 * the user stored as "ada@x.com", rather than nothing and then a 409. The other operators keep the
 * literal as sent (see trimsLiteral).
 */
export function coerceLiteral(
  def: AttrDef | undefined,
  value: FilterValue,
  storedTrimmed = false,
): FilterValue {
  if (typeof value !== "string" || def === undefined) return value;
  if (storedTrimmed) return value.trim();
  if (def.type === "boolean") return coerceBoolean(value) ?? value;
  if (def.type === "integer" || def.type === "decimal") {
    const text = value.trim();
    return JSON_NUMBER.test(text) ? Number(text) : value;
  }
  return value;
}

/**
 * Parses a SCIM filter (RFC 7644 §3.4.2.2); throws BadRequestError("invalidFilter"), also for a
 * filter that parses but compares an attribute in a way its type cannot answer (filterProblem in
 * filter-validate.ts: `meta.lastModified gt "garbage"`, `active gt "true"`).
 * `resourceType`, when the caller knows it, narrows which `eq`/`ne` literals are trimmed
 * (trimsLiteral): without it a displayName literal is trimmed for Users as well as Groups. With it,
 * names resolve against that type's own attributes (coreAttrsOf), as a PATCH path does: the
 * other type's core schema URN (`urn:...:core:2.0:Group:displayName` on Users) names nothing the
 * resource has, and is invalidFilter (RFC 7644 §3.4.2.2) rather than read as the resource's own.
 */
export function parseFilter(text: string, resourceType?: ResourceType): FilterNode {
  return parse(text, coreAttrsOf(resourceType), false, resourceType);
}

export interface FilterWithinOptions {
  /**
   * Literals as identity providers write them in a PATCH path's value filter, beside the RFC's
   * quoted strings: in single quotes (`emails[type eq 'work'].value`, GitHub's SCIM documentation
   * of Entra ID's requests) or bare (`emails[type eq work].value`: Keycloak's keycloak-scim2-storage
   * writes the type unquoted). A bare word other than true, false, null or a number is a string.
   */
  lenientLiterals?: boolean;
}

/**
 * Parses a filter whose attribute names resolve against `table` (a complex attribute's
 * sub-attributes for the value filter of a PATCH path such as `emails[type eq "work"]`).
 */
export function parseFilterWithin(
  text: string,
  table: AttrTable,
  inValuePath = false,
  options: FilterWithinOptions = {},
): FilterNode {
  return parse(text, table, inValuePath, undefined, options.lenientLiterals === true);
}

function parse(
  text: string,
  table: AttrTable,
  inValuePath: boolean,
  resourceType?: ResourceType,
  lenient = false,
): FilterNode {
  if (typeof text !== "string") fail("the filter must be a string");
  if (text.length > MAX_LENGTH) fail(`longer than ${MAX_LENGTH} characters`);
  const parser = new Parser(tokenize(text, lenient), resourceType, lenient);
  const node = parser.parse(table, inValuePath);
  // Once per filter, not per resource: a comparison its attribute's type cannot answer
  // (`meta.lastModified gt "garbage"`, `active gt "true"`) is invalidFilter, not an empty list.
  const problem = filterProblem(node, table);
  if (problem !== undefined) fail(problem);
  return node;
}
