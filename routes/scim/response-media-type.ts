/**
 * The media type of a SCIM answer, from the request's Accept (RFC 9110 §12.5.1): RFC 7644 §3.8 says
 * a service provider MUST support `Accept: application/scim+json` and SHOULD support
 * `Accept: application/json`, both naming the same SCIM JSON. application/scim+json is answered
 * unless the client prefers application/json: it names it with a higher quality than scim+json gets
 * (scim+json not acceptable at all, as with `Accept: application/json` alone). No Accept, `* /*`,
 * `application/*`, or a tie keep application/scim+json; an Accept naming neither (text/html) is
 * answered with scim+json too, as before (no 406).
 */
export const SCIM_JSON = "application/scim+json; charset=utf-8";
export const PLAIN_JSON = "application/json; charset=utf-8";

export function responseMediaType(accept: string | undefined): string {
  if (accept === undefined || accept === "") return SCIM_JSON;
  const ranges = parseAccept(accept);
  const scim = quality(ranges, "application", "scim+json");
  const json = quality(ranges, "application", "json");
  return json > scim ? PLAIN_JSON : SCIM_JSON;
}

interface MediaRange {
  type: string;
  subtype: string;
  q: number;
}

function parseAccept(accept: string): MediaRange[] {
  const out: MediaRange[] = [];
  for (const part of accept.split(",")) {
    const [range = "", ...params] = part.split(";");
    const [type = "", subtype = ""] = range.trim().toLowerCase().split("/");
    if (type === "" || subtype === "") continue;
    let q = 1;
    for (const param of params) {
      const [name = "", value = ""] = param.split("=");
      if (name.trim().toLowerCase() !== "q") continue;
      const parsed = Number(value.trim());
      q = Number.isFinite(parsed) ? Math.min(Math.max(parsed, 0), 1) : 0;
    }
    out.push({ type, subtype, q });
  }
  return out;
}

/** The quality the most specific range matching type/subtype gives it (RFC 9110 §12.5.1); 0 if none. */
function quality(ranges: readonly MediaRange[], type: string, subtype: string): number {
  let best = -1;
  let q = 0;
  for (const r of ranges) {
    const specificity =
      r.type === type && r.subtype === subtype
        ? 2
        : r.type === type && r.subtype === "*"
          ? 1
          : r.type === "*"
            ? 0
            : -1;
    if (specificity > best) {
      best = specificity;
      q = r.q;
    }
  }
  return q;
}
