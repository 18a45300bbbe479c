import { externalIdText } from "../scim/external-id-text.js";

/**
 * The identity rule every webhook intake path applies to an entity it found by name (a userName,
 * an Okta login, a group's displayName): found by name, an entity that holds another externalId is
 * someone else, who holds the name now. One with no externalId (another client created it) may be
 * the one the event means, and is adopted.
 */

/** An externalId as the directory counts one (empty or whitespace-only is none). */
export { externalIdText };

/**
 * Whether an entity whose externalId is `held`, found by name, may be the one an event names by
 * the externalId `wanted`: true unless both are present and differ.
 */
export function maySameEntity(wanted: unknown, held: unknown): boolean {
  const a = externalIdText(wanted);
  const b = externalIdText(held);
  return a === undefined || b === undefined || a === b;
}
