import type { EntityKind } from "../scim/scim-types.js";

/** Every kind of difference a reconciliation run can find (ARCHITECTURE.md, "Outside interface"). */
export const DRIFT_CLASSES = [
  "missing",
  "changed",
  "activeMismatch",
  "membership",
  "attributeValues",
  "deletedBehind",
  "orphans",
] as const;

export type DriftClass = (typeof DRIFT_CLASSES)[number];
export type DriftCounts = Record<DriftClass, number>;

/** One entity named in a report. Ids only: no userNames or emails (no personal data in reports). */
export interface DriftEntry {
  kind: EntityKind;
  /** The bridge's own SCIM id (absent for orphans, which no source knows). */
  id?: string;
  /** The platform's id of the object, when it has one. */
  platformId?: string;
  /** What differs, e.g. "active: platform true, desired false", "fields: displayName". */
  detail?: string;
}

export const RUN_STATES = [
  "queued",
  "running",
  "succeeded",
  "failed",
  "awaiting-confirmation",
  "discarded",
] as const;
export type RunState = (typeof RUN_STATES)[number];
/** States of a run or resync that is not finished (held ones included): never trimmed by `keepRuns`. */
export const UNFINISHED_RUN_STATES: readonly RunState[] = ["queued", "running", "awaiting-confirmation"];

/** The mass-deprovisioning guard's view of a run or resync (invariant 8). */
export interface GuardResult {
  /** Planned deactivations and deletions, orphans included. */
  plannedDeprovisions: number;
  /** Users the source owns on the platform. */
  ownedUsers: number;
  share: number;
  maxShare: number;
  tripped: boolean;
}

export function emptyCounts(): DriftCounts {
  return {
    missing: 0,
    changed: 0,
    activeMismatch: 0,
    membership: 0,
    attributeValues: 0,
    deletedBehind: 0,
    orphans: 0,
  };
}
