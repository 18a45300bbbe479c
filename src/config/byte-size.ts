const UNITS: Record<string, number> = { b: 1, kb: 1024, mb: 1024 ** 2, gb: 1024 ** 3 };

/**
 * A size such as `1mb`, `512kb`, `100` (bytes), with 1024-based units as body-parser reads them;
 * undefined when it is not one.
 */
export function parseByteSize(text: string): number | undefined {
  const match = /^\s*(\d+(?:\.\d+)?)\s*(b|kb|mb|gb)?\s*$/i.exec(text);
  if (!match) return undefined;
  return Math.floor(Number(match[1]) * (UNITS[(match[2] ?? "b").toLowerCase()] ?? 1));
}
