import { createBullBoard } from "@bull-board/api";
import { BullMQAdapter } from "@bull-board/api/bullMQAdapter";
import { ExpressAdapter } from "@bull-board/express";
import type { Queue } from "bullmq";
import express, { type Router } from "express";
import type { AdminPrincipals } from "../../src/admin/admin-principals.js";
import { isAppError } from "../../src/errors.js";
import { adminAuthentication, principalOf } from "./admin-auth.js";

export interface QueueBoardRouterDeps {
  principals: AdminPrincipals;
  /** Every BullMQ queue of the bridge (sync, lifecycle, reconcile, resync). */
  queues: Queue[];
  /** Where the app mounts the router. Default /admin/queues. */
  basePath?: string;
}

function board(queues: Queue[], basePath: string, readOnlyMode: boolean): Router {
  const adapter = new ExpressAdapter();
  adapter.setBasePath(basePath);
  createBullBoard({
    queues: queues.map((queue) => new BullMQAdapter(queue, { readOnlyMode, allowRetries: !readOnlyMode })),
    // @bull-board/express declares its adapter against its own copy of @bull-board/api's types.
    serverAdapter: adapter as unknown as Parameters<typeof createBullBoard>[0]["serverAdapter"],
  });
  return adapter.getRouter() as Router;
}

/**
 * Bull Board behind admin authentication: admins get the full board, viewers a read-only one
 * (no retry, clean, promote or remove). Mounted outside /admin/v1, at /admin/queues.
 */
export function createQueueBoardRouter(deps: QueueBoardRouterDeps): Router {
  const basePath = deps.basePath ?? "/admin/queues";
  const forAdmins = board(deps.queues, basePath, false);
  const forViewers = board(deps.queues, basePath, true);
  const router = express.Router();
  router.use(adminAuthentication(deps.principals));
  router.use((req, res, next) => {
    const principal = principalOf(res);
    return (principal.role === "admin" ? forAdmins : forViewers)(req, res, next);
  });
  router.use(((err, _req, res, _next) => {
    const status = isAppError(err) ? err.status : 500;
    res.status(status).json({
      error: {
        code: isAppError(err) ? err.code : "internal",
        message: status === 500 ? "Internal error" : err.message,
      },
    });
  }) as express.ErrorRequestHandler);
  return router;
}
