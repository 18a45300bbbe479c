import type { ManagerLookup } from "../mapping/user-profile.js";
import type { JsonObject } from "../scim/scim-types.js";
import type { DriftClass } from "./reconcile-types.js";
import { diffUserFields } from "./user-fields.js";

/** What the directory holds for an entity the run looks at. */
export type DesiredState<T> =
  | { state: "present"; resource: T }
  | { state: "tombstone" }
  /** Neither a document nor a tombstone (never existed, or purged). */
  | { state: "unknown" };

export type Owner = "this" | "other" | "none";

export interface Finding {
  cls: DriftClass;
  detail?: string;
}

export type Repair = "none" | "sync" | "deactivate-orphan";

export interface Classification {
  findings: Finding[];
  repair: Repair;
  /** The repair would deactivate or delete a platform user (counted by the guard). */
  deprovision: boolean;
}

export interface PlatformUserInput {
  /** The platform's user, as listed. */
  platform: JsonObject & { id: string };
  owner: Owner;
  /** Only read when owner is "this". */
  desired: DesiredState<JsonObject & { active: boolean }>;
  onDelete: "deactivate" | "delete";
  orphans: "report" | "deactivate";
  /**
   * What the run looked up about the desired user's enterprise manager, as the sync does: the
   * manager is then compared as the sync sends it (its platform id). Without it, it is not compared.
   */
  manager?: { lookup: ManagerLookup | undefined };
  /** Workspace users are compared; an embed-tenant source owns no workspace users. */
}

const NOTHING: Classification = { findings: [], repair: "none", deprovision: false };
const NOTHING_REPAIR = { repair: "none" as const, deprovision: false };

function platformActive(user: JsonObject): boolean {
  // RFC 7643 §4.1.1: active is optional; a platform user without it is taken as active.
  return user.active !== false;
}

/** Classifies one platform user found while streaming the platform's listing. Pure. */
export function classifyPlatformUser(input: PlatformUserInput): Classification {
  const active = platformActive(input.platform);
  if (input.owner === "other") return NOTHING;
  if (input.owner === "none") {
    const wouldDeactivate = input.orphans === "deactivate" && active;
    return {
      findings: [{ cls: "orphans", detail: active ? "active" : "inactive" }],
      repair: wouldDeactivate ? "deactivate-orphan" : "none",
      deprovision: wouldDeactivate,
    };
  }
  const desired = input.desired;
  if (desired.state === "unknown") {
    return {
      findings: [{ cls: "changed", detail: "owned, but unknown to the directory" }],
      ...NOTHING_REPAIR,
    };
  }
  if (desired.state === "tombstone") {
    if (input.onDelete === "delete") {
      return {
        findings: [{ cls: "activeMismatch", detail: "deleted at the source, still on the platform" }],
        repair: "sync",
        deprovision: true,
      };
    }
    if (!active) return NOTHING;
    return {
      findings: [{ cls: "activeMismatch", detail: "deleted at the source, active on the platform" }],
      repair: "sync",
      deprovision: true,
    };
  }
  const findings: Finding[] = [];
  const want = desired.resource.active !== false;
  let deprovision = false;
  if (want !== active) {
    findings.push({ cls: "activeMismatch", detail: `active: platform ${active}, desired ${want}` });
    deprovision = !want;
  }
  const fields = diffUserFields(
    desired.resource,
    input.platform,
    input.manager ? { manager: input.manager.lookup } : undefined,
  );
  if (fields.length > 0) findings.push({ cls: "changed", detail: `fields: ${fields.join(", ")}` });
  return { findings, repair: findings.length > 0 ? "sync" : "none", deprovision };
}

/**
 * Classifies a directory entity the platform listing did not contain (kind user or group).
 * `platformId` is the id the sync side last recorded for it.
 */
export function classifyUnseen(input: {
  desired: DesiredState<unknown>;
  platformId?: string;
}): Classification {
  if (input.desired.state !== "present") return NOTHING;
  if (input.platformId) {
    return {
      findings: [{ cls: "deletedBehind", detail: "owned object no longer on the platform" }],
      repair: "sync",
      deprovision: false,
    };
  }
  return {
    findings: [{ cls: "missing", detail: "not on the platform" }],
    repair: "sync",
    deprovision: false,
  };
}
