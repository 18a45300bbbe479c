import { describe, expect, it } from "vitest";
import { narrowRefusal, narrowingCalls } from "../../../src/mapping/narrow-refusal.js";

const ids = (n: number) => Array.from({ length: n }, (_, i) => `u${i}`);
/** A platform that refuses every piece naming one of `culprits`. */
const refusing = (culprits: readonly string[]) => {
  const sent: string[][] = [];
  const send = async (piece: string[]) => {
    sent.push(piece);
    return piece.some((id) => culprits.includes(id)) ? ("refused" as const) : ("landed" as const);
  };
  return { sent, send };
};

describe("narrowRefusal", () => {
  it("finds one culprit among 100 with at most 2·ceil(log2 100) calls and lands the other 99", async () => {
    const { sent, send } = refusing(["u37"]);
    const narrowed = await narrowRefusal(ids(100), send);
    expect(narrowed.refused).toEqual(["u37"]);
    expect(narrowed.landed.flat().sort()).toEqual(
      ids(100)
        .filter((id) => id !== "u37")
        .sort(),
    );
    expect(narrowed.calls).toBe(sent.length);
    expect(narrowed.calls).toBeLessThanOrEqual(14);
  });

  it("finds several culprits, each landed piece sent once", async () => {
    const culprits = ["u0", "u50", "u99"];
    const { send } = refusing(culprits);
    const narrowed = await narrowRefusal(ids(100), send);
    expect(narrowed.refused.sort()).toEqual([...culprits].sort());
    const landed = narrowed.landed.flat();
    expect(new Set(landed).size).toBe(landed.length);
    expect(landed.length).toBe(97);
  });

  it("stops at the cap: a refusal of every piece costs narrowingCalls, and the whole chunk is refused", async () => {
    const { sent, send } = refusing(ids(100));
    const narrowed = await narrowRefusal(ids(100), send);
    expect(sent.length).toBe(narrowingCalls(100));
    expect(narrowed.landed).toEqual([]);
    expect(narrowed.refused.sort()).toEqual(ids(100).sort());
  });

  it("a single member is refused as it is, without a call", async () => {
    const { sent, send } = refusing(["u0"]);
    expect(await narrowRefusal(["u0"], send)).toEqual({ landed: [], refused: ["u0"], calls: 0 });
    expect(sent).toEqual([]);
  });

  it("a failure other than a refusal ends it: what landed before stays reported by the sends", async () => {
    let calls = 0;
    const send = async (piece: string[]) => {
      calls += 1;
      if (calls === 2) throw new Error("platform down");
      return piece.includes("u1") ? ("refused" as const) : ("landed" as const);
    };
    await expect(narrowRefusal(ids(4), send)).rejects.toThrow("platform down");
  });
});
