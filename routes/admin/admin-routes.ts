import type { Request, Response } from "express";
import type { z } from "zod";
import type { AdminRole } from "../../src/admin/admin-principals.js";
import { type AdminService, entityRef } from "../../src/admin/admin-service.js";
import { NotFoundError } from "../../src/errors.js";
import type { EntityKind } from "../../src/scim/scim-types.js";
import { principalOf } from "./admin-auth.js";
import {
  auditEntrySchema,
  deadLetterSchema,
  discardedSchema,
  entityLookupSchema,
  entityStatusSchema,
  groupLookupQuerySchema,
  pageOf,
  pageQuerySchema,
  reconcileRequestSchema,
  reconcileStartedSchema,
  resyncRequestSchema,
  resyncSchema,
  resyncStartedSchema,
  retriedSchema,
  retryRequestSchema,
  runSchema,
  sourcesSchema,
  statusResponseSchema,
  userLookupQuerySchema,
} from "./admin-schemas.js";

export interface AdminRoute {
  method: "get" | "post" | "delete";
  path: string;
  operationId: string;
  summary: string;
  role: AdminRole;
  body?: z.ZodType;
  query?: z.ZodType;
  response?: z.ZodType;
  status?: number;
  handle(ctx: {
    req: Request;
    res: Response;
    body: unknown;
    query: unknown;
    service: AdminService;
  }): Promise<unknown>;
}

type Page = { offset: number; limit: number; source?: string };

function param(req: Request, name: string): string {
  const value = req.params[name];
  if (typeof value !== "string" || value.length === 0) throw new NotFoundError();
  return value;
}

function kindParam(req: Request): EntityKind {
  const kind = param(req, "kind").replace(/s$/, "");
  if (kind !== "user" && kind !== "group") throw new NotFoundError("kind is user or group");
  return kind;
}

/** The admin API (`/admin/v1`), one table: the router serves it and openapi.json describes it. */
export const ADMIN_ROUTES: readonly AdminRoute[] = [
  {
    method: "get",
    path: "/status",
    operationId: "getStatus",
    summary: "Idle, pending, dead letters, queue counts per state, per-source counts",
    role: "viewer",
    response: statusResponseSchema,
    handle: ({ service }) => service.status(),
  },
  {
    method: "get",
    path: "/sources",
    operationId: "listSources",
    summary: "Configured sources with their directory counts",
    role: "viewer",
    response: sourcesSchema,
    handle: async ({ service }) => ({ sources: await service.sources() }),
  },
  ...(["users", "groups"] as const).map(
    (plural): AdminRoute => ({
      method: "get",
      path: `/sources/:source/${plural}`,
      operationId: plural === "users" ? "findUser" : "findGroup",
      summary:
        plural === "users"
          ? "Sync status of the user with this userName (case-insensitive) or externalId"
          : "Sync status of the group with this displayName (case-insensitive) or externalId",
      role: "viewer",
      query: plural === "users" ? userLookupQuerySchema : groupLookupQuerySchema,
      response: entityLookupSchema,
      handle: ({ req, query, service }) =>
        service.findEntityStatus(
          param(req, "source"),
          plural === "users" ? "user" : "group",
          query as Record<string, string | undefined>,
        ),
    }),
  ),
  ...(["users", "groups"] as const).map(
    (plural): AdminRoute => ({
      method: "get",
      path: `/sources/:source/${plural}/:id`,
      operationId: plural === "users" ? "getUserSyncStatus" : "getGroupSyncStatus",
      summary: `Sync status of one ${plural.slice(0, -1)}: desired, last applied, last error, platform id`,
      role: "viewer",
      response: entityStatusSchema,
      handle: ({ req, service }) =>
        service.entityStatus(
          entityRef(param(req, "source"), plural === "users" ? "user" : "group", param(req, "id")),
        ),
    }),
  ),
  {
    method: "post",
    path: "/sources/:source/reconcile",
    operationId: "triggerReconcile",
    summary: "Start a reconciliation run (dryRun: report only)",
    role: "admin",
    body: reconcileRequestSchema,
    response: reconcileStartedSchema,
    status: 202,
    handle: async ({ req, res, body, service }) => {
      const { dryRun } = body as z.output<typeof reconcileRequestSchema>;
      const run = await service.triggerReconcile(param(req, "source"), dryRun, principalOf(res));
      return { runId: run.runId, state: run.state, dryRun: run.dryRun };
    },
  },
  {
    method: "get",
    path: "/reconcile-runs",
    operationId: "listReconcileRuns",
    summary: "Reconciliation runs, newest first",
    role: "viewer",
    query: pageQuerySchema,
    response: pageOf(runSchema),
    handle: ({ query, service }) => service.listRuns(query as Page),
  },
  {
    method: "get",
    path: "/reconcile-runs/:runId",
    operationId: "getReconcileRun",
    summary: "One run's state and report",
    role: "viewer",
    response: runSchema,
    handle: ({ req, service }) => service.getRun(param(req, "runId")),
  },
  ...(["confirm", "discard"] as const).map(
    (decision): AdminRoute => ({
      method: "post",
      path: `/reconcile-runs/:runId/${decision}`,
      operationId: decision === "confirm" ? "confirmReconcileRun" : "discardReconcileRun",
      summary:
        decision === "confirm"
          ? "Apply a run held by the deprovisioning guard"
          : "Drop a run held by the deprovisioning guard",
      role: "admin",
      response: runSchema,
      status: decision === "confirm" ? 202 : 200,
      handle: ({ req, res, service }) =>
        decision === "confirm"
          ? service.confirmRun(param(req, "runId"), principalOf(res))
          : service.discardRun(param(req, "runId"), principalOf(res)),
    }),
  ),
  {
    method: "post",
    path: "/sources/:source/resync",
    operationId: "triggerResync",
    summary: "Resync everything ({}) or the named users and groups",
    role: "admin",
    body: resyncRequestSchema,
    response: resyncStartedSchema,
    status: 202,
    handle: async ({ req, res, body, service }) => {
      const { users, groups } = body as z.output<typeof resyncRequestSchema>;
      const scope = users || groups ? { users: users ?? [], groups: groups ?? [] } : { all: true as const };
      const op = await service.triggerResync(param(req, "source"), scope, principalOf(res));
      return { id: op.id, operationId: op.id, state: op.state };
    },
  },
  {
    method: "get",
    path: "/resyncs",
    operationId: "listResyncs",
    summary: "Resync operations, newest first",
    role: "viewer",
    query: pageQuerySchema,
    response: pageOf(resyncSchema),
    handle: ({ query, service }) => service.listResyncs(query as Page),
  },
  {
    method: "get",
    path: "/resyncs/:id",
    operationId: "getResync",
    summary: "One resync's state and progress",
    role: "viewer",
    response: resyncSchema,
    handle: ({ req, service }) => service.getResync(param(req, "id")),
  },
  ...(["confirm", "discard"] as const).map(
    (decision): AdminRoute => ({
      method: "post",
      path: `/resyncs/:id/${decision}`,
      operationId: decision === "confirm" ? "confirmResync" : "discardResync",
      summary: `${decision === "confirm" ? "Apply" : "Drop"} a resync held by the deprovisioning guard`,
      role: "admin",
      response: resyncSchema,
      status: decision === "confirm" ? 202 : 200,
      handle: ({ req, res, service }) => service.settleResync(param(req, "id"), decision, principalOf(res)),
    }),
  ),
  {
    method: "get",
    path: "/dead-letters",
    operationId: "listDeadLetters",
    summary: "Entities whose sync failed permanently, with reasons",
    role: "viewer",
    query: pageQuerySchema,
    response: pageOf(deadLetterSchema),
    handle: ({ query, service }) => service.listDeadLetters(query as Page),
  },
  {
    method: "post",
    path: "/dead-letters/retry",
    operationId: "retryDeadLetters",
    summary: "Retry all dead letters, or the named ones",
    role: "admin",
    body: retryRequestSchema,
    response: retriedSchema,
    status: 202,
    handle: ({ res, body, service }) => {
      const { refs } = body as z.output<typeof retryRequestSchema>;
      return service.retryDeadLetters(refs ?? "all", principalOf(res));
    },
  },
  {
    method: "post",
    path: "/dead-letters/:source/:kind/:id/retry",
    operationId: "retryDeadLetter",
    summary: "Retry one dead letter",
    role: "admin",
    response: retriedSchema,
    status: 202,
    handle: async ({ req, res, service }) => {
      const ref = entityRef(param(req, "source"), kindParam(req), param(req, "id"));
      const result = await service.retryDeadLetters([ref], principalOf(res));
      if (result.retried === 0) throw new NotFoundError("No such dead letter");
      return result;
    },
  },
  {
    method: "delete",
    path: "/dead-letters/:source/:kind/:id",
    operationId: "discardDeadLetter",
    summary: "Discard one dead letter",
    role: "admin",
    response: discardedSchema,
    handle: async ({ req, res, service }) => {
      const { released } = await service.discardDeadLetter(
        entityRef(param(req, "source"), kindParam(req), param(req, "id")),
        principalOf(res),
      );
      return released ? { discarded: true, released: true } : { discarded: true };
    },
  },
  {
    method: "get",
    path: "/audit",
    operationId: "listAudit",
    summary: "Admin actions: who, what, when (newest first)",
    role: "viewer",
    query: pageQuerySchema.omit({ source: true }),
    response: pageOf(auditEntrySchema),
    handle: ({ query, service }) => service.listAudit(query as Page),
  },
];
