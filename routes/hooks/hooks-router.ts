import { isUtf8 } from "node:buffer";
import express, {
  type ErrorRequestHandler,
  type NextFunction,
  type Request,
  type RequestHandler,
  type Response,
  type Router,
} from "express";
import type { Redis } from "ioredis";
import type { Registry } from "prom-client";
import type { Config, SourceConfig } from "../../src/config/config-schema.js";
import type { DirectoryStore } from "../../src/directory/directory-types.js";
import {
  BadRequestError,
  isAppError,
  MethodNotAllowedError,
  NotFoundError,
  UnauthorizedError,
} from "../../src/errors.js";
import { HookMetrics } from "../../src/hooks/hook-metrics.js";
import { HookStateStore } from "../../src/hooks/hook-state-store.js";
import { parseOktaDelivery } from "../../src/hooks/okta-event.js";
import { OktaHookService } from "../../src/hooks/okta-hook-service.js";
import { secretMatches } from "../../src/hooks/shared-secret.js";
import type { Canonicalisers } from "../../src/hooks/signed-event.js";
import { SignedEventsService } from "../../src/hooks/signed-events-service.js";
import { verifyWebhook } from "../../src/hooks/standard-webhooks.js";
import { MAX_BODY_NESTING, nestsDeeperThan } from "../../src/json-depth.js";
import type { Logger } from "../../src/observability/logger.js";
import { toCanonicalGroup, toCanonicalUser } from "../../src/scim/canonical-resource.js";

export interface HooksRouterDeps {
  config: Config;
  directory: DirectoryStore;
  redis: Redis;
  /** Redis key prefix (config.redis.prefix); hooks keys live under `${prefix}:hooks:`. */
  prefix: string;
  logger: Logger;
  /** Where the event counter is registered (default: a private registry). */
  registry?: Registry;
  /**
   * Runs on POSTs after authentication, so that only a source's own callers spend what these
   * handlers guard (the intake rate limit): after the Okta secret (before the body is read), and
   * after the signature of signed events (which needs the body). The verification GET and 405s do
   * not run them. Errors they pass to `next` (the intake limiter's 429 too) get the hooks' JSON
   * error format.
   */
  beforeHandlers?: RequestHandler[];
  /** Clock for webhook timestamps (epoch ms); default Date.now. */
  now?: () => number;
}

type HookKind = "okta" | "events";

const MAX_WEBHOOK_ID_LENGTH = 256;

/** What each hook route serves: Okta's verification GET (and HEAD) and deliveries; signed deliveries. */
const ALLOWED_METHODS: Readonly<Record<HookKind, string>> = { okta: "GET, HEAD, POST", events: "POST" };

/** The source of a hook route, or a 404 when it is unknown or that hook is not configured. */
function hookConfig(
  config: Config,
  req: Request,
  kind: HookKind,
): NonNullable<SourceConfig["hooks"][HookKind]> {
  const source = String(req.params.source);
  const sourceConfig = Object.hasOwn(config.sources, source) ? config.sources[source] : undefined;
  const hook = sourceConfig?.hooks[kind];
  if (!hook) throw new NotFoundError(`No ${kind} hook is configured for this source`);
  return hook;
}

function rawBytes(req: Request): Buffer {
  return Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
}

/**
 * A leading UTF-8 byte order mark is ignored, as the SCIM intake and body-parser do (RFC 8259 §8.1
 * allows a parser to). A signed delivery's signature is checked over the bytes as sent, BOM included.
 */
function withoutByteOrderMark(text: string): string {
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
}

function parseJson(bytes: Buffer): unknown {
  // JSON is UTF-8 (RFC 8259 §8.1): decoding other bytes (a Latin-1 "Zoë") would store U+FFFD.
  if (!isUtf8(bytes)) throw new BadRequestError("The body is not UTF-8", "invalidSyntax");
  try {
    return JSON.parse(withoutByteOrderMark(bytes.toString("utf8")));
  } catch {
    throw new BadRequestError("The body is not valid JSON", "invalidSyntax");
  }
}

/**
 * A signed-events body: a delivery nested deeper than MAX_BODY_NESTING is 400 invalidSyntax before
 * anything is read or written (its SCIM resources would otherwise make JSON.stringify run out of
 * stack while the write is prepared: a 500, which the sender retries). Okta deliveries are not
 * checked: only a few named fields of each event are read, so a deep part elsewhere is ignored.
 */
function parseEventsJson(bytes: Buffer): unknown {
  const body = parseJson(bytes);
  if (nestsDeeperThan(body, MAX_BODY_NESTING)) {
    throw new BadRequestError(
      `The body nests objects or arrays deeper than ${MAX_BODY_NESTING} levels`,
      "invalidSyntax",
    );
  }
  return body;
}

/** JSON errors `{"error": {"code", "message", "items"?}}`; body-parser's errors keep their status (413). */
function hooksErrorHandler(logger: Logger): ErrorRequestHandler {
  return (err, req, res, _next) => {
    let status = 500;
    let code = "internal";
    let message = "Internal error";
    let items: unknown;
    if (isAppError(err)) {
      ({ status, code, message } = err);
      const details = err.details as { items?: unknown } | undefined;
      items = details?.items;
      if (err.retryAfter !== undefined) res.setHeader("Retry-After", String(err.retryAfter));
    } else if (err?.type === "entity.too.large") {
      status = 413;
      code = "payload_too_large";
      message = `Request body larger than ${err.limit} bytes`;
    } else if (typeof err?.status === "number" && err.status >= 400 && err.status < 500) {
      status = err.status;
      code = typeof err.type === "string" ? err.type : "bad_request";
      message = String(err.message);
    }
    // The request's id (echoed in x-request-id) leads an operator from a 5xx to its line.
    if (status >= 500) logger.error({ err, reqId: (req as { id?: unknown }).id }, "webhook request failed");
    res.status(status).json({ error: { code, message, ...(items === undefined ? {} : { items }) } });
  };
}

type AsyncHandler = (req: Request, res: Response) => Promise<void> | void;

/** A middleware that checks something (throws to refuse) and then passes on. */
function check(fn: (req: Request) => void): RequestHandler {
  return (req: Request, _res: Response, next: NextFunction) => {
    try {
      fn(req);
    } catch (err) {
      next(err);
      return;
    }
    next();
  };
}

function handle(fn: AsyncHandler): RequestHandler {
  return (req: Request, res: Response, next: NextFunction) => {
    Promise.resolve()
      .then(() => fn(req, res))
      .catch(next);
  };
}

/**
 * Webhook intake, mounted at `/hooks`: Okta Event Hooks at `/:source/okta` and signed change
 * events (Standard Webhooks) at `/:source/events`. Bodies are read raw (signatures are over the
 * exact bytes) with the server's body limit; everything is applied to the directory before the
 * answer, so a 2xx means the change is durable. A request is authenticated (Okta secret, events
 * signature) before `beforeHandlers` (the source's intake rate limit) run: a caller without the
 * secret gets 401 and never spends the source's bucket, which it shares with SCIM.
 */
export function createHooksRouter(deps: HooksRouterDeps): Router {
  const { config, directory, redis, prefix } = deps;
  const logger = deps.logger.child({ module: "hooks" });
  const now = deps.now ?? Date.now;
  const state = new HookStateStore(redis, prefix);
  const metrics = new HookMetrics(deps.registry);
  const canon: Canonicalisers = { user: toCanonicalUser, group: (body) => toCanonicalGroup(body).resource };
  const okta = new OktaHookService({ directory, state, metrics, logger });
  const events = new SignedEventsService({ directory, state, metrics, logger, canon });
  const raw = express.raw({ type: () => true, limit: config.server.bodyLimit });
  const before = deps.beforeHandlers ?? [];

  const oktaAuth = check((req) => {
    const hook = hookConfig(config, req, "okta");
    const presented = req.get(hook.header ?? "Authorization");
    if (!secretMatches(presented, hook.secret)) throw new UnauthorizedError("Invalid Okta Event Hook secret");
  });
  const eventsSource = check((req) => {
    hookConfig(config, req, "events");
  });
  // The signature is over the exact body, so this runs after `raw` (bounded by the body limit).
  const eventsAuth = check((req) => {
    const hook = hookConfig(config, req, "events");
    verifyWebhook(
      hook.secret,
      {
        id: req.get("webhook-id"),
        timestamp: req.get("webhook-timestamp"),
        signature: req.get("webhook-signature"),
      },
      rawBytes(req),
      now(),
    );
  });

  const router = express.Router();

  // Okta's one-time verification: echo the challenge (the secret is required here too).
  router.get(
    "/:source/okta",
    oktaAuth,
    handle((req, res) => {
      const challenge = req.get("X-Okta-Verification-Challenge");
      if (!challenge)
        throw new BadRequestError("X-Okta-Verification-Challenge header is required", "invalidSyntax");
      res.status(200).json({ verification: challenge });
    }),
  );

  router.post(
    "/:source/okta",
    oktaAuth,
    ...before,
    raw,
    handle(async (req, res) => {
      const actions = parseOktaDelivery(parseJson(rawBytes(req)));
      const summary = await okta.handleDelivery(String(req.params.source), actions);
      res.status(200).json(summary);
    }),
  );

  router.post(
    "/:source/events",
    eventsSource,
    raw,
    eventsAuth,
    ...before,
    handle(async (req, res) => {
      const body = rawBytes(req);
      const id = req.get("webhook-id");
      if (!id || id.length > MAX_WEBHOOK_ID_LENGTH) {
        throw new BadRequestError(
          `webhook-id must be at most ${MAX_WEBHOOK_ID_LENGTH} characters`,
          "invalidSyntax",
        );
      }
      const result = await events.handleDelivery(String(req.params.source), id, parseEventsJson(body));
      res.status(200).json(result);
    }),
  );

  // RFC 9110 §15.5.6: a 405 names the methods the route serves.
  router.all(
    ["/:source/okta", "/:source/events"],
    handle((req, res) => {
      const kind: HookKind = req.path.endsWith("/okta") ? "okta" : "events";
      hookConfig(config, req, kind);
      res.setHeader("Allow", ALLOWED_METHODS[kind]);
      throw new MethodNotAllowedError(`${req.method} is not supported here; use ${ALLOWED_METHODS[kind]}`);
    }),
  );

  router.use(hooksErrorHandler(logger));
  return router;
}
