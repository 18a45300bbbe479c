import { USER_ATTRS, getKey } from "./attribute-schema.js";
import { isJsonObject } from "./dialects.js";
import { matchesFilterWithin } from "./filter-eval.js";
import { parsePatchPath } from "./patch-path.js";
import type { Json, JsonObject } from "./scim-types.js";

/**
 * The values a SCIM attribute path names in a resource, multi-valued attributes flattened:
 * `userName`, `name.givenName`, `emails.value`, `addresses[type eq "work"].country`,
 * `urn:...:enterprise:2.0:User:department`, `urn:...:enterprise:2.0:User:manager.value`
 * (the path grammar of RFC 7644 §3.5.2, names case-insensitive). Empty when nothing is there.
 * For mapping rules that read one attribute of a user. Throws BadRequestError ("invalidPath", or
 * "invalidFilter" for a value filter that does not parse).
 */
export function valuesAtPath(resource: JsonObject, pathText: string): Json[] {
  const path = parsePatchPath(pathText, USER_ATTRS);
  const t = path.target;
  const container = t.urn === undefined ? resource : getKey(resource, t.urn);
  if (!isJsonObject(container)) return [];
  if (t.attr === "") return [container];
  const v = getKey(container, t.attr);
  if (v === undefined || v === null) return [];
  let list = Array.isArray(v) ? v : [v];
  let sub = t.sub;
  if (path.filter) {
    const table = t.def?.sub ?? new Map();
    list = list.filter((el) => isJsonObject(el) && matchesFilterWithin(path.filter!, el, table));
    sub = path.filterSub;
  }
  if (sub === undefined) return list;
  const out: Json[] = [];
  for (const el of list) {
    const sv = isJsonObject(el) ? getKey(el, sub) : undefined;
    if (sv === undefined || sv === null) continue;
    if (Array.isArray(sv)) out.push(...sv);
    else out.push(sv);
  }
  return out;
}
