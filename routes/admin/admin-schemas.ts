import { z } from "zod";
import { DRIFT_CLASSES, RUN_STATES } from "../../src/reconcile/reconcile-types.js";

/** Request and response schemas of the admin API: they validate requests and generate openapi.json. */

const id = z.string().min(1).max(256);
const kind = z.enum(["user", "group"]);

export const entityRefSchema = z.object({ source: id, kind, id }).strict();

export const reconcileRequestSchema = z
  .object({ dryRun: z.boolean().default(false).describe("Report only: change nothing") })
  .strict();

export const resyncRequestSchema = z
  .object({
    users: z.array(id).max(10_000).optional().describe("Bridge user ids; with neither list, everything"),
    groups: z.array(id).max(10_000).optional().describe("Bridge group ids"),
  })
  .strict();

export const retryRequestSchema = z
  .object({
    refs: z.array(entityRefSchema).max(10_000).optional().describe("Which to retry; all when absent"),
  })
  .strict();

/**
 * A list's query. Strict: an unknown key (`?sorce=okta`, `?page=2`) is a 400 naming it, not a
 * filter silently dropped (the whole list, or its first page, answered as if it were what was asked).
 */
export const pageQuerySchema = z
  .object({
    offset: z.coerce.number().int().min(0).default(0),
    limit: z.coerce.number().int().min(1).max(500).default(50),
    source: id.optional(),
  })
  .strict();

export const errorSchema = z.object({
  error: z.object({ code: z.string(), message: z.string(), details: z.unknown().optional() }),
});

const counts = z.object(Object.fromEntries(DRIFT_CLASSES.map((cls) => [cls, z.number().int()])));
const driftEntry = z.object({
  kind,
  id: z.string().optional(),
  platformId: z.string().optional(),
  detail: z.string().optional(),
});
const guard = z.object({
  plannedDeprovisions: z.number().int(),
  ownedUsers: z.number().int(),
  share: z.number(),
  maxShare: z.number(),
  tripped: z.boolean(),
});
const state = z.enum(RUN_STATES);

/** What became of the entities a run or resync enqueued (src/admin/repair-outcome.ts). */
const outcome = z
  .object({
    synced: z
      .number()
      .int()
      .describe("Entities whose sync completed after the request (or gone at the source)"),
    failed: z.number().int().describe("Entities whose sync ended as a dead letter"),
    pending: z.number().int().describe("Entities not settled yet; once finished, those that never settled"),
    settled: z.boolean().describe("Every entity synced or failed"),
    failures: z
      .array(
        z.object({ ref: z.string().describe("<source>/<kind>/<id>"), code: z.string(), reason: z.string() }),
      )
      .describe("The first failures (at most 20), with the dead letter's code and reason"),
    lastSettledAt: z.string().describe("When an entity last settled (or the tracking began)"),
  })
  .describe(
    "Enqueued is not done: a run or resync stays running until every entity it enqueued synced or failed, then ends succeeded (none failed) or failed",
  );

export const statusResponseSchema = z.object({
  idle: z.boolean(),
  pending: z
    .number()
    .int()
    .describe(
      "Entities waiting for a sync (dirty), queued lifecycle changes and late writes (lateWrites.count)",
    ),
  deadLetters: z.number().int(),
  queues: z.record(z.string(), z.record(z.string(), z.number().int())),
  sources: z.record(z.string(), z.object({ users: z.number(), groups: z.number(), deadLetters: z.number() })),
  awaitingConfirmation: z
    .array(
      z.object({
        kind: z.enum(["reconcile", "resync"]),
        id: z.string(),
        source: z.string(),
        plannedDeprovisions: z.number().int().optional(),
        ownedUsers: z.number().int().optional(),
      }),
    )
    .describe(
      "Runs and resyncs held by the deprovisioning guard, oldest first (they do not hold idle false)",
    ),
  lateWrites: z
    .object({
      count: z
        .number()
        .int()
        .describe("Platform writes that may still land late: marked on the wire, or waiting for their check"),
      until: z
        .string()
        .nullable()
        .describe("When the last of them is read on the platform again (null when none)"),
    })
    .describe("Late writes hold idle false (they are counted in pending too) until their check is due"),
  pausedQueues: z
    .array(
      z.object({
        queue: z.string().describe("The paused queue: sync or lifecycle"),
        until: z.string().describe("When the pause ends and the queue's jobs run again"),
      }),
    )
    .describe(
      "Queues paused for the platform: it answered 429 (or 503) with a Retry-After longer than a minute (capped by platform.retryAfterCapMs); their jobs wait, none runs, until then. Empty when none is",
    ),
});

/** Who settled a held run or resync, and when. */
const settled = {
  settledBy: z.string().optional().describe("The admin token's name that confirmed or discarded it"),
  settledAt: z.string().optional(),
};

export const runSchema = z.object({
  id: z.string().describe("The same as runId"),
  runId: z.string(),
  source: z.string(),
  state,
  dryRun: z.boolean(),
  trigger: z.enum(["schedule", "admin"]),
  requestedBy: z.string().optional().describe("The admin token's name that started it (admin runs)"),
  counts,
  samples: z.record(z.string(), z.array(driftEntry)),
  sampleSize: z.number().int().describe("At most this many samples are kept per class"),
  guard: guard.optional(),
  repairs: z.object({
    entities: z.number().describe("Entities to resync (enqueued once applied)"),
    orphanDeactivations: z.number(),
    applied: z
      .boolean()
      .describe("The repairs were enqueued (orphans deactivated); see outcome for what became of them"),
    outcome: outcome.optional(),
  }),
  createdAt: z.string(),
  startedAt: z.string().optional(),
  finishedAt: z.string().optional(),
  durationMs: z.number().optional(),
  phaseMs: z
    .record(z.string(), z.number())
    .optional()
    .describe("Time spent per pass (platform users, groups, directory), ms"),
  attributeSlice: z
    .object({ slice: z.number().int(), slices: z.number().int() })
    .optional()
    .describe("Attribute values were read for the users of this slice (all of them when slices is 1)"),
  error: z.string().optional(),
  ...settled,
  supersededBy: z
    .string()
    .optional()
    .describe("A held scheduled run discarded by a newer held scheduled run of its source (that run's id)"),
});

export const resyncSchema = z.object({
  id: z.string(),
  source: z.string(),
  state,
  scope: z
    .union([
      z.object({ all: z.literal(true) }),
      z.object({ users: z.array(z.string()), groups: z.array(z.string()) }),
    ])
    .describe("Everything, or the named bridge ids"),
  requestedBy: z.string().optional().describe("The admin token's name that started it"),
  total: z.number().int(),
  enqueued: z.number().int(),
  unknown: z.array(z.string()),
  guard: guard.optional(),
  withheld: z
    .number()
    .int()
    .optional()
    .describe("Confirmed: deprovisionings found beyond those the admin was shown, not applied"),
  heldAgainAs: z.string().optional().describe("The held resync that waits with the withheld ones"),
  heldFrom: z.string().optional().describe("The confirmed resync whose withheld ones this one holds"),
  outcome: outcome.optional(),
  error: z.string().optional(),
  createdAt: z.string(),
  startedAt: z.string().optional(),
  finishedAt: z.string().optional(),
  durationMs: z.number().optional(),
  ...settled,
});

export const pageOf = (item: z.ZodType) => z.object({ total: z.number().int(), items: z.array(item) });

export const deadLetterSchema = z.object({
  ref: entityRefSchema,
  reason: z.string(),
  code: z.string(),
  operation: z.string().optional(),
  at: z.string(),
  attempts: z.number().int(),
  autoRetriedAt: z
    .string()
    .optional()
    .describe("When a reconciliation handed this letter to a sync once (transient failures only); not again"),
});

export const auditEntrySchema = z.object({
  at: z.string(),
  actor: z.string(),
  role: z.enum(["viewer", "admin"]),
  action: z.string(),
  target: z.string().optional(),
  outcome: z.enum(["accepted", "refused", "failed"]),
  details: z
    .record(z.string(), z.union([z.string(), z.number(), z.boolean()]))
    .optional()
    .describe("What the action asked (a dry run, a resync's scope), never a token"),
});

export const entityStatusSchema = z.object({
  source: z.string(),
  kind,
  id: z.string(),
  desired: z.record(z.string(), z.unknown()).nullable(),
  deletedAtSource: z.boolean(),
  generation: z
    .number()
    .int()
    .nullable()
    .describe("The directory's generation of the entity (each change at the source adds one)"),
  memberCount: z.number().int().optional().describe("Groups: members in the directory"),
  state: z.enum(["pending", "synced", "retrying", "dead"]),
  platformId: z.string().nullable(),
  lastApplied: z.object({ generation: z.number(), at: z.string().nullable() }).nullable(),
  lastError: z.record(z.string(), z.unknown()).nullable(),
  lateWriteUntil: z
    .string()
    .nullable()
    .describe(
      "A write of this entity may still land on the platform until then: its deletion or rename waits (lastError waiting_for_late_write), and it is read on the platform again",
    ),
});

/**
 * GET /sources/<source>/users?userName=|externalId= and /groups?displayName=|externalId=: one
 * entity found by the key an operator knows (compared as the SCIM lookups compare it).
 */
function lookupQuery<K extends string>(nameKey: K) {
  const value = z.string().min(1).max(10_000);
  return z
    .object({ [nameKey]: value.optional(), externalId: value.optional() } as Record<
      K | "externalId",
      z.ZodOptional<z.ZodString>
    >)
    .strict()
    .refine((q) => Object.values(q).filter((v) => v !== undefined).length === 1, {
      message: `give exactly one of ${nameKey} and externalId`,
    });
}
export const userLookupQuerySchema = lookupQuery("userName");
export const groupLookupQuerySchema = lookupQuery("displayName");

export const entityLookupSchema = z.object({
  items: z.array(entityStatusSchema).describe("The entity found (at most one: the keys are unique)"),
});

/** POST /sources/<source>/reconcile (202). */
export const reconcileStartedSchema = z.object({
  runId: z.string().describe("GET /reconcile-runs/<runId> follows the run"),
  state,
  dryRun: z.boolean(),
});

/** POST /sources/<source>/resync (202). */
export const resyncStartedSchema = z.object({
  id: z.string().describe("GET /resyncs/<id> follows the resync"),
  operationId: z.string().describe("The same as id"),
  state,
});

export const retriedSchema = z.object({ retried: z.number().int().describe("Dead letters taken back") });

/** GET /sources. */
export const sourcesSchema = z.object({
  sources: z.array(
    z.object({
      id: z.string(),
      target: z.union([z.literal("workspace"), z.record(z.string(), z.unknown())]),
      onDelete: z.enum(["deactivate", "delete"]),
      attributes: z.array(z.string()).describe("Platform attribute names the source maps"),
      users: z.number().int(),
      groups: z.number().int(),
    }),
  ),
});

export const discardedSchema = z.object({
  discarded: z.literal(true),
  released: z
    .literal(true)
    .optional()
    .describe(
      "Present when the letter was a deleted entity's (its deprovisioning given up): the bridge let go of its " +
        "platform object, left as it is and owned by no source; reconciliation reports it as an orphan " +
        "(the `reconcile.orphans` policy decides)",
    ),
});
