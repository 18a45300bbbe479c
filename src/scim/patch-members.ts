import type { MembershipChange } from "../directory/directory-types.js";
import { BadRequestError } from "../errors.js";
import { GROUP_ATTRS } from "./attribute-schema.js";
import { memberIds } from "./canonical-resource.js";
import { matchesFilterWithin } from "./filter-eval.js";
import type { PatchPath } from "./patch-path.js";
import { valueEqIds } from "./patch-path.js";
import type { Json, PatchOperation } from "./scim-types.js";

const MEMBER_TABLE = GROUP_ATTRS.get("members")?.sub ?? new Map();

/**
 * Accumulates the membership part of a group PATCH (RFC 7644 §3.5.2) as a net change, in order,
 * in O(ids touched): add and remove stay disjoint, so the directory can apply them in any order;
 * once a whole-list replace is seen, later adds and removes edit that list instead.
 * The current member list is read only for a filter that is not a plain `value eq` list.
 */
export class MembershipAccumulator {
  private replaced: Set<string> | undefined;
  private readonly added = new Set<string>();
  private readonly removed = new Set<string>();

  constructor(private readonly current: readonly string[] | undefined) {}

  apply(op: PatchOperation["op"], path: PatchPath | undefined, value: Json | undefined): void {
    if (path && (path.target.sub !== undefined || path.filterSub !== undefined)) {
      if (op === "remove" && path.filter) return; // e.g. members[...].display: nothing we keep
      throw new BadRequestError("Members can only be changed as a whole or by value", "invalidPath");
    }
    if (path?.filter) {
      if (op !== "remove") {
        const ids = valueEqIds(path.filter);
        if (!ids) throw new BadRequestError("Members can only be added by value", "invalidPath");
        this.add(ids);
        return;
      }
      this.remove(this.matching(path));
      return;
    }
    if (op === "add") this.add(memberIds(value));
    else if (op === "replace") this.replace(memberIds(value));
    else if (value === undefined || value === null) this.replace([]);
    else this.remove(memberIds(value)); // Entra: remove only the members listed in value
  }

  private matching(path: PatchPath): string[] {
    const filter = path.filter!;
    const ids = valueEqIds(filter);
    if (ids) return ids;
    const members = this.members();
    if (!members) {
      throw new BadRequestError("This members filter needs the current member list", "invalidFilter");
    }
    return members.filter((id) => matchesFilterWithin(filter, { value: id }, MEMBER_TABLE));
  }

  /** The member list as it stands after the operations so far, if known. */
  private members(): string[] | undefined {
    const base = this.replaced ?? (this.current ? new Set(this.current) : undefined);
    if (!base) return undefined;
    if (this.replaced) return [...base];
    const out = [...base].filter((id) => !this.removed.has(id));
    for (const id of this.added) if (!base.has(id)) out.push(id);
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
