/**
 * BullMQ queue names. Every queue is created with `prefix: config.redis.prefix` (a hash tag such
 * as "{scim-bridge}", so that all of BullMQ's keys land in one Redis Cluster slot).
 */
export const QUEUE_NAMES = {
  /** One job per entity: `{source, kind, id}`; deduplicated per entity with keepLastIfActive. */
  sync: "sync",
  /** Lifecycle batches flushed to POST /api/v1/users/bulk. */
  lifecycle: "lifecycle",
  /** Reconciliation runs (scheduled and on demand). */
  reconcile: "reconcile",
  /** Resync fan-out operations. */
  resync: "resync",
} as const;

export type QueueName = (typeof QUEUE_NAMES)[keyof typeof QUEUE_NAMES];
