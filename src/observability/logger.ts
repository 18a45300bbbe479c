import { pino, type DestinationStream, type Logger, type LoggerOptions } from "pino";

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

/** The root logger. `destination` (default: stdout) lets tests capture the output. */
export function createLogger(
  level: string = "info",
  options: LoggerOptions = {},
  destination?: DestinationStream,
): Logger {
  const merged: LoggerOptions = {
    level,
    base: { service: "scim-bridge" },
    redact: { paths: REDACT_PATHS, censor: "[redacted]" },
    ...options,
  };
  return destination ? pino(merged, destination) : pino(merged);
}

export type { Logger };
