const NON_ASCII = /[\u0080-\uffff]/;

/**
 * The comparison form of a case-insensitive string (RFC 7643 §2.2 `caseExact: false`): lower-cased,
 * then in Unicode Normalization Form C, so that a name sent composed ("José", U+00E9) and one sent
 * decomposed ("Jose" + U+0301) are the same name, as RFC 8265 §3.3 (PRECIS UsernameCaseMapped) maps
 * a username: case mapping, then NFC. Only for comparing and indexing: what a client sent is stored
 * and returned as sent. ASCII, already in NFC, skips the normalisation.
 */
export function caseFold(value: string): string {
  const lower = value.toLowerCase();
  return NON_ASCII.test(lower) ? lower.normalize("NFC") : lower;
}

/**
 * The form a case-insensitive value had in the indexes before they were folded with caseFold (plain
 * lower case), when it differs from caseFold's: a lookup tries it too, so entries written before
 * are still found; undefined when the two agree (always for ASCII).
 */
export function legacyFold(value: string): string | undefined {
  const lower = value.toLowerCase();
  if (!NON_ASCII.test(lower)) return undefined;
  return lower.normalize("NFC") === lower ? undefined : lower;
}
