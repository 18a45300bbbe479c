import type { Classification, DesiredState, Finding, Owner } from "./classify-user.js";

export interface MemberDiff {
  /** Expected on the platform, not there. */
  missing: string[];
  /** On the platform, not expected. */
  extra: string[];
}

/** Set difference of member keys (platform user ids, or embed users' externalIds). Pure. */
export function diffMembers(expected: Iterable<string>, actual: Iterable<string>): MemberDiff {
  const want = new Set(expected);
  const have = new Set(actual);
  const missing = [...want].filter((key) => !have.has(key));
  const extra = [...have].filter((key) => !want.has(key));
  return { missing, extra };
}

export interface PlatformGroupInput {
  owner: Owner;
  desired: DesiredState<{ displayName: string }>;
  /** The name the platform should show (with the source's prefix applied). */
  expectedName?: string;
  platformName: string;
  /** Member keys that should be on the platform; undefined when not compared. */
  expectedMembers?: Iterable<string>;
  actualMembers?: Iterable<string>;
}

const NOTHING: Classification = { findings: [], repair: "none", deprovision: false };

/**
 * Classifies one owned platform group (workspace group or embed-tenant group). Groups are never
 * orphans: only users are (ARCHITECTURE.md, "Ownership"). Removing a group is not a user
 * deprovisioning, so the guard does not count it.
 */
export function classifyPlatformGroup(input: PlatformGroupInput): Classification {
  if (input.owner !== "this") return NOTHING;
  if (input.desired.state === "unknown") {
    return {
      findings: [{ cls: "changed", detail: "owned, but unknown to the directory" }],
      repair: "none",
      deprovision: false,
    };
  }
  if (input.desired.state === "tombstone") {
    return {
      findings: [{ cls: "changed", detail: "deleted at the source, still on the platform" }],
      repair: "sync",
      deprovision: false,
    };
  }
  const findings: Finding[] = [];
  if (input.expectedName !== undefined && input.expectedName !== input.platformName) {
    findings.push({ cls: "changed", detail: "fields: displayName" });
  }
  if (input.expectedMembers && input.actualMembers) {
    const diff = diffMembers(input.expectedMembers, input.actualMembers);
    if (diff.missing.length > 0 || diff.extra.length > 0) {
      findings.push({
        cls: "membership",
        detail: `members: ${diff.missing.length} missing, ${diff.extra.length} extra`,
      });
    }
  }
  return { findings, repair: findings.length > 0 ? "sync" : "none", deprovision: false };
}
