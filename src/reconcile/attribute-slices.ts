/**
 * Attribute values are read one user at a time, so a run checks one slice of a large source and
 * successive runs walk through the slices. Pure.
 */
export function attributeSlices(users: number, maxChecksPerRun: number): number {
  if (users <= 0 || maxChecksPerRun <= 0) return 1;
  return Math.max(1, Math.ceil(users / maxChecksPerRun));
}

/** FNV-1a of the id: a stable slice for each user. */
export function sliceOf(id: string, slices: number): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < id.length; i++) {
    hash ^= id.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash % slices;
}
