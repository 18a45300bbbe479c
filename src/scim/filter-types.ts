/**
 * The parsed form of a SCIM filter (RFC 7644 §3.4.2.2). Produced by `parseFilter`, evaluated by
 * `matchesFilter`, and read by the directory to route `eq` lookups on indexed attributes.
 */
export type CompareOp = "eq" | "ne" | "co" | "sw" | "ew" | "gt" | "ge" | "lt" | "le";

export type FilterValue = string | number | boolean | null;

export type FilterNode =
  | { type: "compare"; path: string; op: CompareOp; value: FilterValue }
  | { type: "present"; path: string }
  | { type: "and"; left: FilterNode; right: FilterNode }
  | { type: "or"; left: FilterNode; right: FilterNode }
  | { type: "not"; expr: FilterNode }
  /** `emails[type eq "work" and value co "@x"]`: `path` is the multi-valued attribute. */
  | { type: "valuePath"; path: string; filter: FilterNode };
