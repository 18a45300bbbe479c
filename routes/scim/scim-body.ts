import { isUtf8 } from "node:buffer";
import express, { type RequestHandler } from "express";
import { parseByteSize } from "../../src/config/byte-size.js";
import { AppError } from "../../src/errors.js";
import { bodyNotJson, bodyNotUtf8, bodyTooLarge } from "./scim-errors.js";

/** Media types the SCIM routes read as JSON: application/scim+json, application/json, any *json*. */
const JSON_TYPE = /json/i;

/**
 * Whether a request body of this Content-Type is read as JSON: a JSON media type
 * (application/scim+json, application/json, Okta's SCIM 1.1 text/json), or none at all. A header
 * sent empty ("Content-Type: ") counts as none. Any other media type is left unread, and a route
 * that needs the body answers it 415 (requireObjectBody in scim-http.ts).
 */
export function readsAsJson(contentType: string | undefined): boolean {
  return contentType === undefined || contentType.trim() === "" || JSON_TYPE.test(contentType);
}

/** A charset other than UTF-8 (RFC 8259 says JSON is UTF-8; anything else goes the long way). */
const OTHER_CHARSET = /charset\s*=\s*(?!"?utf-?8"?\s*(?:;|$))/i;

/**
 * Reads a SCIM request's JSON body into `req.body`, like `express.json({strict: false})` with the
 * same answers (413 over the limit, 400 invalidSyntax for malformed JSON, an empty body is `{}`, a
 * leading byte order mark is ignored, a body that is not JSON-typed is left unread (readsAsJson);
 * bytes that are not UTF-8 are 400 invalidSyntax, where body-parser decodes them to U+FFFD), at a
 * fraction of its cost per request: body-parser runs content-type parsing, charset decoding and stream
 * bookkeeping that a UTF-8 JSON body does not need. A compressed body or another charset goes
 * through express.json itself.
 */
export function scimJsonBody(limit: string): RequestHandler {
  const maxBytes = parseByteSize(limit);
  const general = express.json({
    limit,
    strict: false,
    type: (req) => readsAsJson(req.headers["content-type"]),
    // Bytes that are not UTF-8 under a UTF-8 charset are refused, as on the fast path below.
    verify: (_req, _res, buf, encoding) => {
      if (/^utf-?8$/i.test(encoding) && !isUtf8(buf)) throw bodyNotUtf8();
    },
  });
  return (req, res, next) => {
    const headers = req.headers;
    const type = headers["content-type"];
    if (!readsAsJson(type)) return next();
    if (
      maxBytes === undefined ||
      headers["content-encoding"] !== undefined ||
      (type !== undefined && OTHER_CHARSET.test(type))
    ) {
      return general(req, res, next);
    }
    // No body at all (neither length nor chunked): nothing to read, as body-parser.
    if (headers["content-length"] === undefined && headers["transfer-encoding"] === undefined) return next();
    // Over the limit: 413, and the connection closes after it, so the rest of the body is never read.
    const refuse = () => {
      res.setHeader("Connection", "close");
      next(bodyTooLarge(limit));
    };
    const declared = Number(headers["content-length"] ?? 0);
    if (declared > maxBytes) return refuse();
    const chunks: Buffer[] = [];
    let received = 0;
    let failed = false;
    const onData = (chunk: Buffer) => {
      received += chunk.length;
      if (received > maxBytes) {
        failed = true;
        req.off("data", onData);
        refuse();
        return;
      }
      chunks.push(chunk);
    };
    req.on("data", onData);
    req.once("error", (err) => {
      if (failed) return;
      failed = true;
      next(
        new AppError("The request body could not be read", { status: 400, code: "bad_request", cause: err }),
      );
    });
    req.once("end", () => {
      if (failed) return;
      const bytes = chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks);
      // RFC 7644 §3.8: UTF-8 only; decoding other bytes would store U+FFFD in their place.
      if (!isUtf8(bytes)) return next(bodyNotUtf8());
      let text = bytes.toString("utf8");
      // A UTF-8 byte order mark is ignored, as body-parser does (RFC 8259 §8.1 allows it).
      if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
      if (text.length === 0) {
        req.body = {};
        return next();
      }
      try {
        req.body = JSON.parse(text);
      } catch {
        return next(bodyNotJson());
      }
      next();
    });
  };
}
