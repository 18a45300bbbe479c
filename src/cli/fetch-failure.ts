/**
 * Why a request of the CLI got no answer, in words an operator can act on. Node's fetch rejects
 * with `TypeError: fetch failed` whatever happened; the reason (a refused connection, a host name
 * that does not resolve, TLS spoken to a plain HTTP port, an untrusted certificate) is in its
 * `cause`, sometimes an AggregateError of one attempt per address (`localhost`: ::1 and 127.0.0.1).
 */

interface Cause {
  code?: unknown;
  message?: unknown;
  cause?: unknown;
  errors?: unknown;
}

const CERTIFICATE_CODES = new Set([
  "DEPTH_ZERO_SELF_SIGNED_CERT",
  "SELF_SIGNED_CERT_IN_CHAIN",
  "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
  "UNABLE_TO_GET_ISSUER_CERT_LOCALLY",
  "CERT_HAS_EXPIRED",
  "CERT_NOT_YET_VALID",
  "ERR_TLS_CERT_ALTNAME_INVALID",
]);

/** The innermost error of the cause chain that carries a code (or the innermost one at all). */
function rootCause(err: unknown): Cause | undefined {
  let found: Cause | undefined;
  let current: unknown = err;
  for (let depth = 0; depth < 5 && current && typeof current === "object"; depth++) {
    const c = current as Cause;
    const inner = Array.isArray(c.errors) && c.errors.length > 0 ? c.errors[0] : c.cause;
    if (typeof c.code === "string" || !found) found = c;
    current = inner;
  }
  return found;
}

export function describeFetchFailure(err: unknown): string {
  const cause = rootCause((err as Cause | undefined)?.cause ?? err);
  const code = typeof cause?.code === "string" ? cause.code : undefined;
  const message = typeof cause?.message === "string" && cause.message !== "" ? cause.message : undefined;
  switch (code) {
    case "ECONNREFUSED":
      return "connection refused (ECONNREFUSED): nothing listens there; check the URL's host and port, and that the bridge runs";
    case "ENOTFOUND":
    case "EAI_AGAIN":
      return `host name not found (${code}): check the URL's host`;
    case "ECONNRESET":
      return "the connection was reset (ECONNRESET)";
    case "ETIMEDOUT":
    case "UND_ERR_CONNECT_TIMEOUT":
      return `the connection timed out (${code})`;
    case "EPROTO":
    case "ERR_SSL_WRONG_VERSION_NUMBER":
    case "ERR_SSL_PACKET_LENGTH_TOO_LONG":
      return `TLS handshake failed (${code}): the port does not speak TLS (https:// to a plain HTTP port?)`;
    default:
      break;
  }
  if (message === "bad port") {
    // The Fetch standard's blocked ports (6000 for X11, 10080, 6665-6669 for IRC, ...).
    return "Node's fetch refuses this port (one of the Fetch standard's blocked ports): serve the admin API on another port (PORT or admin.port)";
  }
  if (code && CERTIFICATE_CODES.has(code)) {
    return `TLS certificate not trusted (${code}${message ? `: ${message}` : ""}); NODE_EXTRA_CA_CERTS names a CA file to trust`;
  }
  if (message && message !== (err as Cause | undefined)?.message)
    return code ? `${message} (${code})` : message;
  return (err as Error | undefined)?.message ?? String(err);
}
