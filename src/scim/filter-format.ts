import type { FilterNode } from "./filter-types.js";

/**
 * Writes a parsed filter back as RFC 7644 §3.4.2.2 text that `parseFilter` reads to the same
 * tree (logical operands are parenthesised, strings JSON-escaped). For logs and debugging; it
 * contains the filter's values, so log it at debug level only (they may be personal data).
 */
export function formatFilter(node: FilterNode): string {
  switch (node.type) {
    case "compare":
      return `${node.path} ${node.op} ${JSON.stringify(node.value)}`;
    case "present":
      return `${node.path} pr`;
    case "and":
    case "or":
      return `(${formatFilter(node.left)}) ${node.type} (${formatFilter(node.right)})`;
    case "not":
      return `not (${formatFilter(node.expr)})`;
    case "valuePath":
      return `${node.path}[${formatFilter(node.filter)}]`;
  }
}
