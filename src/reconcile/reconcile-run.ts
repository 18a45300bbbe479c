import type { EntityRef } from "../scim/scim-types.js";
import type { DriftSamples } from "./drift-report.js";
import type { DriftCounts, GuardResult, RunState } from "./reconcile-types.js";

/** A reconciliation run and its report (GET /admin/v1/reconcile-runs/:runId). */
export interface ReconcileRun {
  id: string;
  runId: string;
  source: string;
  state: RunState;
  dryRun: boolean;
  trigger: "schedule" | "admin";
  requestedBy?: string;
  counts: DriftCounts;
  /** The first N entities of each class. */
  samples: DriftSamples;
  sampleSize: number;
  guard?: GuardResult;
  /** Entities marked dirty and resynced, and orphans deactivated (or planned, when held). */
  repairs: { entities: number; orphanDeactivations: number; applied: boolean };
  createdAt: string;
  startedAt?: string;
  finishedAt?: string;
  durationMs?: number;
  /** Time spent per pass (platform users, groups, directory), ms. */
  phaseMs?: Record<string, number>;
  /** Attribute values were read for the users of this slice (all of them when slices is 1). */
  attributeSlice?: { slice: number; slices: number };
  error?: string;
  settledBy?: string;
  settledAt?: string;
  /** A held scheduled run discarded by a newer held scheduled run of its source (that run's id). */
  supersededBy?: string;
}

export type ResyncScope = { all: true } | { users: string[]; groups: string[] };

/** A resync operation (GET /admin/v1/resyncs/:id): one fan-out with progress. */
export interface ResyncOperation {
  id: string;
  source: string;
  state: RunState;
  scope: ResyncScope;
  requestedBy?: string;
  /** Entities to resync (known once counted), and how many were enqueued so far. */
  total: number;
  enqueued: number;
  /** Ids named in the request that the directory does not know. */
  unknown: string[];
  guard?: GuardResult;
  /**
   * A confirmed resync applies only the deprovisionings the admin was shown (its held set): users
   * it found to deprovision beyond those were not resynced (`withheld`), and wait in a new held
   * resync (`heldAgainAs`).
   */
  withheld?: number;
  heldAgainAs?: string;
  /** A resync created held, with what the confirmed resync `heldFrom` withheld. */
  heldFrom?: string;
  createdAt: string;
  startedAt?: string;
  finishedAt?: string;
  durationMs?: number;
  error?: string;
  settledBy?: string;
  settledAt?: string;
}

export type { EntityRef };
