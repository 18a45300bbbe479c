import {
  DRIFT_CLASSES,
  type DriftClass,
  type DriftCounts,
  type DriftEntry,
  emptyCounts,
} from "./reconcile-types.js";

export type DriftSamples = Record<DriftClass, DriftEntry[]>;

export function emptySamples(): DriftSamples {
  return Object.fromEntries(DRIFT_CLASSES.map((cls) => [cls, []])) as unknown as DriftSamples;
}

/** Counts every finding and keeps the first `sampleSize` entities of each class (memory stays flat). */
export class DriftReport {
  readonly counts: DriftCounts = emptyCounts();
  readonly samples: DriftSamples = emptySamples();
  plannedDeprovisions = 0;
  repairs = 0;

  constructor(private readonly sampleSize: number) {}

  add(cls: DriftClass, entry: DriftEntry): void {
    this.counts[cls] += 1;
    const list = this.samples[cls];
    if (list.length < this.sampleSize) list.push(entry);
  }

  total(): number {
    return DRIFT_CLASSES.reduce((sum, cls) => sum + this.counts[cls], 0);
  }
}
