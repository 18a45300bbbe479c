import type { MembershipChange } from "../directory/directory-types.js";
import { BadRequestError } from "../errors.js";
import { GROUP_ATTRS, getKey } from "./attribute-schema.js";
import { memberIds } from "./canonical-resource.js";
import { isJsonObject } from "./dialects.js";
import { matchesFilterWithin } from "./filter-eval.js";
import type { PatchPath } from "./patch-path.js";
import { elementFromFilter, valueEqIds } from "./patch-path.js";
import type { GroupMember, Json, JsonObject, PatchOperation } from "./scim-types.js";

const MEMBER_TABLE = GROUP_ATTRS.get("members")?.sub ?? new Map();

/**
 * Whether a members operation needs the current member list: only a value filter that is not a
 * plain `value eq` list (`members[value ne "x"]`, `members[type eq "User"]`, ...) on a remove or
 * replace. The group update reads the list only then, so the common PATCHes stay one read.
 */
export function memberFilterNeedsList(op: PatchOperation["op"], path: PatchPath | undefined): boolean {
  if (!path?.filter || path.target.sub !== undefined) return false;
  if (path.filterSub !== undefined && !removesMatchedMembers(op, path)) return false;
  return op !== "add" && valueEqIds(path.filter) === undefined;
}

/**
 * `remove members[<filter>].value`: a member is its value (the user's id, RFC 7643 §4.2), so a
 * member whose value is removed is no member, as an email without its value is none (RFC 7643
 * §2.4): the matching members are removed, as by `remove members[<filter>]`.
 */
function removesMatchedMembers(op: PatchOperation["op"], path: PatchPath): boolean {
  return op === "remove" && path.filter !== undefined && path.filterSub === "value";
}

/** A member as the directory knows it: every member is a user (the store only links users). */
function userMember(value: string): GroupMember {
  return { value, type: "User" };
}

/**
 * Accumulates the membership part of a group PATCH (RFC 7644 §3.5.2) as a net change, in order,
 * in O(ids touched): add and remove stay disjoint, so the directory can apply them in any order;
 * once a whole-list replace is seen, later adds and removes edit that list instead.
 * The current member list is needed only when memberFilterNeedsList says so.
 */
export class MembershipAccumulator {
  private replaced: Set<string> | undefined;
  private readonly added = new Set<string>();
  private readonly removed = new Set<string>();

  constructor(private readonly current: readonly GroupMember[] | undefined) {}

  apply(op: PatchOperation["op"], target: PatchPath | undefined, value: Json | undefined): void {
    // `remove members[...].value` removes those members (removesMatchedMembers).
    const path =
      target && removesMatchedMembers(op, target) ? { target: target.target, filter: target.filter } : target;
    if (path && (path.target.sub !== undefined || path.filterSub !== undefined)) {
      if (op === "remove" && path.filter) return; // e.g. members[...].display: nothing we keep
      throw new BadRequestError("Members can only be changed as a whole or by value", "invalidPath");
    }
    if (path?.filter) {
      if (!memberFilterNeedsList(op, path)) {
        const ids = valueEqIds(path.filter);
        if (!ids) throw new BadRequestError("Members can only be added by value", "invalidPath");
        if (op === "remove") this.remove(ids);
        else if (op === "add") this.add(ids);
        else this.replaceByValue(ids, value);
        return;
      }
      const hits = this.matching(path);
      if (op === "remove") {
        this.remove(hits); // matching nothing is a no-op, as for every remove (patch.ts)
        return;
      }
      this.replaceMatching(path, hits, value);
      return;
    }
    if (op === "add") this.add(memberIds(value));
    else if (op === "replace") this.replace(memberIds(value));
    else if (value === undefined || value === null) this.replace([]);
    else this.remove(memberIds(value)); // Entra: remove only the members listed in value
  }

  /**
   * `replace members[value eq "x"]` without reading the member list: x is replaced by the members
   * the value names (RFC 7644 §3.5.2.3; removing a member that is not there changes nothing). A
   * value that names no member id only describes the member: x is then kept, or created when it is
   * missing (the filter describes it; Entra creates filtered elements this way).
   */
  private replaceByValue(ids: string[], value: Json | undefined): void {
    const replacement = namesMembers(value) ? memberIds(value) : [];
    if (replacement.length === 0) {
      this.add(ids);
      return;
    }
    this.remove(ids.filter((id) => !replacement.includes(id)));
    this.add(replacement);
  }

  /**
   * RFC 7644 §3.5.2.3: the matching members are replaced by the value's members. When none
   * matches, the member the filter describes is created (as patch.ts does for other attributes),
   * else it is noTarget.
   */
  private replaceMatching(path: PatchPath, hits: string[], value: Json | undefined): void {
    const element = Array.isArray(value) && value.length === 1 ? value[0] : value;
    if (hits.length > 0) {
      const ids = memberIds(value);
      this.remove(hits);
      this.add(ids);
      return;
    }
    const base = elementFromFilter(path.filter!);
    const created: JsonObject | undefined = base && isJsonObject(element) ? { ...base, ...element } : base;
    if (!created || typeof getKey(created, "value") !== "string") {
      throw new BadRequestError("No member matches the filter and none can be created from it", "noTarget");
    }
    this.add(memberIds(created));
  }

  private matching(path: PatchPath): string[] {
    const filter = path.filter!;
    return this.members()
      .filter((m) => matchesFilterWithin(filter, m as unknown as JsonObject, MEMBER_TABLE))
      .map((m) => m.value);
  }

  /** The member list as it stands after the operations so far. */
  private members(): GroupMember[] {
    if (this.replaced) return [...this.replaced].map(userMember);
    if (!this.current) {
      // The caller must read the list when memberFilterNeedsList says so (a bug, not bad input).
      throw new Error("This members filter needs the current member list; read it with the group");
    }
    const out = this.current.filter((m) => !this.removed.has(m.value));
    const have = new Set(this.current.map((m) => m.value));
    for (const id of this.added) if (!have.has(id)) out.push(userMember(id));
    return out;
  }

  private add(ids: string[]): void {
    for (const id of ids) {
      if (this.replaced) {
        this.replaced.add(id);
      } else {
        this.removed.delete(id);
        this.added.add(id);
      }
    }
  }

  private remove(ids: string[]): void {
    for (const id of ids) {
      if (this.replaced) {
        this.replaced.delete(id);
      } else {
        this.added.delete(id);
        this.removed.add(id);
      }
    }
  }

  private replace(ids: string[]): void {
    this.replaced = new Set(ids);
    this.added.clear();
    this.removed.clear();
  }

  result(): MembershipChange {
    if (this.replaced) return { replace: [...this.replaced] };
    const out: MembershipChange = {};
    if (this.added.size > 0) out.add = [...this.added];
    if (this.removed.size > 0) out.remove = [...this.removed];
    return out;
  }
}

/** Whether a PATCH value names member ids (`{value}` or a list of them), rather than only describing one. */
function namesMembers(value: Json | undefined): boolean {
  const list = value === undefined || value === null ? [] : Array.isArray(value) ? value : [value];
  return list.some((m) => (isJsonObject(m) ? typeof getKey(m, "value") === "string" : typeof m === "string"));
}
