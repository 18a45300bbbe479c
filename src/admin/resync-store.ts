import { randomUUID } from "node:crypto";
import type { Redis } from "ioredis";
import type { ResyncOperation, ResyncScope } from "../reconcile/reconcile-run.js";
import type { RunState } from "../reconcile/reconcile-types.js";
import { OperationStore } from "./operation-store.js";

/** Resync operations (fan-outs with progress), the last `keep` per source. */
export class ResyncStore extends OperationStore<RunState, ResyncOperation> {
  constructor(redis: Redis, prefix: string, keep = 50) {
    super(redis, prefix, "resync", keep);
  }

  async createOperation(input: {
    source: string;
    scope: ResyncScope;
    requestedBy?: string;
  }): Promise<ResyncOperation> {
    const op: ResyncOperation = {
      id: randomUUID(),
      source: input.source,
      state: "queued",
      scope: input.scope,
      requestedBy: input.requestedBy,
      total: "all" in input.scope ? 0 : input.scope.users.length + input.scope.groups.length,
      enqueued: 0,
      unknown: [],
      createdAt: new Date().toISOString(),
    };
    await this.create(op);
    return op;
  }
}
