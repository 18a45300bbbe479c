/**
 * An externalId as the bridge counts one (RFC 7643 §3.1: the provisioning client's identifier of
 * the resource): a string with something in it. An empty or whitespace-only one ("", "   ")
 * identifies nobody, so it is treated as absent everywhere: not stored, not indexed, not matched,
 * on every intake path (SCIM POST, PUT, PATCH and the webhooks). Kept as sent otherwise (opaque and
 * caseExact: never trimmed).
 */
export function externalIdText(value: unknown): string | undefined {
  return typeof value === "string" && value.trim() !== "" ? value : undefined;
}
