import { pino, type Logger, type LoggerOptions } from "pino";

/** Paths that never reach a log line. Shared by every logger and by pino-http. */
export const REDACT_PATHS = [
  "authorization",
  "Authorization",
  "token",
  "tokens",
  "secret",
  "password",
  "*.authorization",
  "*.Authorization",
  "*.token",
  "*.tokens",
  "*.secret",
  "*.password",
  "req.headers.authorization",
  "req.headers.cookie",
  'req.headers["x-okta-verification-challenge"]',
  'req.headers["webhook-signature"]',
  'res.headers["set-cookie"]',
  "headers.authorization",
  "platform.token",
];

export function createLogger(level: string = "info", options: LoggerOptions = {}): Logger {
  return pino({
    level,
    base: { service: "scim-bridge" },
    redact: { paths: REDACT_PATHS, censor: "[redacted]" },
    ...options,
  });
}

export type { Logger };
