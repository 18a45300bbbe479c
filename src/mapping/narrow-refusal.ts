/**
 * Narrowing a refusal to its culprits. A group PATCH that adds (or removes) up to 100 members is
 * refused whole for good by the platform (400/422) when it refuses one of them: every other member
 * of that chunk would wait for it. Sending the chunk again in halves, and the refused halves in
 * halves again, finds the member(s) the platform really refuses with about 2·log2(n) calls each,
 * and lands the others. The calls are capped: past the cap, the pieces still refused are refused
 * as a whole (a refusal of the group itself, a member limit say, refuses every piece).
 */

/** Culprits a chunk's narrowing pays calls for before the rest of it is refused whole. */
export const NARROWED_CULPRITS = 3;

/** The most calls a refused chunk of `size` members is narrowed with: 2·ceil(log2 size)·culprits. */
export function narrowingCalls(size: number): number {
  return size <= 1 ? 0 : 2 * Math.ceil(Math.log2(size)) * NARROWED_CULPRITS;
}

export interface Narrowed<T> {
  /** The pieces the platform accepted, in the order they were sent. */
  landed: T[][];
  /** The members it refused: each alone, or a piece left whole once the calls ran out. */
  refused: T[];
  /** The calls made (at most `maxCalls`). */
  calls: number;
}

/**
 * Narrows the refusal of `items` (already refused whole) by sending halves: `send` answers
 * "landed" or "refused" for a piece, and throws any other failure (which ends the narrowing; what
 * landed before it has been sent). At most `maxCalls` calls (default narrowingCalls(items.length)).
 */
export async function narrowRefusal<T>(
  items: readonly T[],
  send: (piece: T[]) => Promise<"landed" | "refused">,
  maxCalls = narrowingCalls(items.length),
): Promise<Narrowed<T>> {
  const result: Narrowed<T> = { landed: [], refused: [], calls: 0 };
  // Refused pieces still to split, depth first (a culprit is found before the next is looked for).
  const stack: T[][] = [[...items]];
  while (stack.length > 0) {
    const piece = stack.pop() as T[];
    if (piece.length <= 1 || result.calls >= maxCalls) {
      result.refused.push(...piece);
      continue;
    }
    const middle = Math.ceil(piece.length / 2);
    const halves = [piece.slice(0, middle), piece.slice(middle)];
    const refusedHalves: T[][] = [];
    for (const half of halves) {
      if (result.calls >= maxCalls) {
        refusedHalves.push(half);
        continue;
      }
      result.calls += 1;
      if ((await send(half)) === "landed") result.landed.push(half);
      else refusedHalves.push(half);
    }
    // The second half on top: the first half's culprits are found first.
    stack.push(...refusedHalves.reverse());
  }
  return result;
}
