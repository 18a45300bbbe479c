/** Thin HTTP edges: reading a JSON body and writing JSON or error answers. */
import type { IncomingMessage, ServerResponse } from "node:http";
import { SCHEMA_ERROR } from "../../scim/scim-types.js";
import { EmulatorError, violation } from "./emulator-error.js";

const MAX_BODY = 10 * 1024 * 1024;

export async function readRawBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY) throw new EmulatorError(413, "PAYLOAD_TOO_LARGE", "request body too large");
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString("utf8");
}

const JSON_TYPE = { pattern: /^application\/json\s*(;|$)/i, name: "application/json" };
const SCIM_TYPE = { pattern: /^application\/scim\+json\s*(;|$)/i, name: "application/scim+json" };
const EITHER_TYPE = {
  pattern: /^application\/(scim\+)?json\s*(;|$)/i,
  name: "application/json or application/scim+json",
};

/**
 * Parses a JSON body; an empty body is `undefined`. The contract's content type is required:
 * `application/json` under /api/v1, `application/scim+json` under /api/scim/v2 (the only media
 * type platform-api.yaml declares for SCIM bodies: a server that holds to it may refuse
 * `application/json` there, though RFC 7644 asks a service provider to accept it). Any other is a
 * violation. `scim` undefined (the inspection routes) accepts either.
 */
export function parseJsonBody(raw: string, contentType: string | undefined, scim?: boolean): unknown {
  if (raw.trim() === "") return undefined;
  const accepted = scim === undefined ? EITHER_TYPE : scim ? SCIM_TYPE : JSON_TYPE;
  if (!contentType || !accepted.pattern.test(contentType)) {
    throw violation(`Content-Type must be ${accepted.name}, got ${contentType ?? "none"}`);
  }
  try {
    return JSON.parse(raw) as unknown;
  } catch {
    throw violation("request body is not valid JSON", "invalidSyntax");
  }
}

function jsonContentType(scim: boolean | undefined): string {
  return scim ? "application/scim+json; charset=utf-8" : "application/json; charset=utf-8";
}

export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  options: { scim?: boolean; headers?: Record<string, string> } = {},
): void {
  if (res.headersSent || res.destroyed) return;
  const headers: Record<string, string> = { ...options.headers };
  if (body === undefined || status === 204) {
    res.writeHead(status, headers);
    res.end();
    return;
  }
  const text = JSON.stringify(body);
  headers["Content-Type"] = jsonContentType(options.scim);
  headers["Content-Length"] = String(Buffer.byteLength(text));
  res.writeHead(status, headers);
  res.end(text);
}

/**
 * Starts a JSON answer and breaks it off (the cutOff fault): the status line, the headers and the
 * first half of the body are written, then the socket is destroyed. With `contentLength` the
 * header names the full body's length; without, the answer is neither sized nor chunked, so its
 * body ends where the connection does. An answer without a body (204) has nothing to cut: it is
 * sent whole. Resolves true when the answer was cut.
 */
export function sendCutOff(
  res: ServerResponse,
  status: number,
  body: unknown,
  options: { scim?: boolean; headers?: Record<string, string>; contentLength: boolean },
): Promise<boolean> {
  if (body === undefined || status === 204) {
    sendJson(res, status, body, options);
    return Promise.resolve(false);
  }
  const bytes = Buffer.from(JSON.stringify(body), "utf8");
  const headers: Record<string, string> = {
    ...options.headers,
    "Content-Type": jsonContentType(options.scim),
  };
  if (options.contentLength) headers["Content-Length"] = String(bytes.length);
  // Neither sized nor chunked: Node closes the connection after such an answer (Connection: close).
  else res.useChunkedEncodingByDefault = false;
  res.writeHead(status, headers);
  return new Promise((resolve) => {
    res.write(bytes.subarray(0, Math.max(1, Math.floor(bytes.length / 2))), () => {
      res.socket?.destroy();
      resolve(true);
    });
  });
}

/** The error body: RFC 7644 §3.12 under /api/scim/v2, `{"error": {code, message}}` elsewhere. */
export function errorBody(err: EmulatorError, scim: boolean): unknown {
  if (scim) {
    return {
      schemas: [SCHEMA_ERROR],
      status: String(err.status),
      ...(err.scimType ? { scimType: err.scimType } : {}),
      detail: err.message,
    };
  }
  return { error: { code: err.code, message: err.message } };
}
