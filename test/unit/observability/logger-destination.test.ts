/**
 * The root logger's stdout (src/observability/logger.ts): written in batches, yet no line is lost
 * at exit and an idle process's line appears within LOG_FLUSH_MS.
 */
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { LOG_FLUSH_MS } from "../../../src/observability/logger.js";

const loggerModule = fileURLToPath(new URL("../../../src/observability/logger.ts", import.meta.url));

/** Runs a script that has `createLogger` in scope; collects stdout with the clock time each chunk came. */
function runScript(
  body: string,
): Promise<{ code: number | null; chunks: Array<{ at: number; text: string }> }> {
  const script = `import { createLogger } from ${JSON.stringify(loggerModule)};\n${body}`;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], {
      stdio: ["ignore", "pipe", "inherit"],
    });
    const chunks: Array<{ at: number; text: string }> = [];
    child.stdout.on("data", (c: Buffer) => chunks.push({ at: Date.now(), text: c.toString() }));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, chunks }));
  });
}

describe("the root logger's stdout", () => {
  it("keeps every line written just before process.exit", async () => {
    const { code, chunks } = await runScript(`
      const log = createLogger("info");
      for (let i = 0; i < 500; i += 1) log.info({ i }, "line");
      process.exit(3);
    `);
    expect(code).toBe(3);
    const lines = chunks
      .map((c) => c.text)
      .join("")
      .trim()
      .split("\n");
    expect(lines).toHaveLength(500);
    expect(JSON.parse(lines[499] as string).i).toBe(499);
  });

  it("keeps the lines of a write waiting on a full pipe (EAGAIN) when the process exits", async () => {
    // The reader does not read for a while: the pipe fills, a batch write gets EAGAIN and waits to
    // retry, and the process exits meanwhile. Every line must still come out once the reader reads.
    const script = `import { createLogger } from ${JSON.stringify(loggerModule)};
      const log = createLogger("info");
      let i = 0;
      const burst = () => { for (let k = 0; k < 500; k += 1, i += 1) log.info({ i, pad: "x".repeat(200) }, "line"); };
      burst();
      setTimeout(() => { burst(); setTimeout(() => { burst(); process.exit(0); }, 50); }, 50);`;
    const child = spawn(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], {
      stdio: ["ignore", "pipe", "inherit"],
    });
    child.stdout.pause();
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    const chunks: Buffer[] = [];
    child.stdout.on("data", (c: Buffer) => chunks.push(c));
    child.stdout.resume();
    const code = await new Promise((resolve) => child.on("close", resolve));
    expect(code).toBe(0);
    const seen = Buffer.concat(chunks)
      .toString()
      .trim()
      .split("\n")
      .map((line) => (JSON.parse(line) as { i: number }).i);
    expect(seen).toEqual(Array.from({ length: 1_500 }, (_, i) => i));
  }, 20_000);

  it("lines of several processes sharing one stdout pipe never interleave (start --processes N)", async () => {
    // Each process logs lines of different lengths as fast as it can into the same pipe: every
    // write must carry whole lines only, at most PIPE_BUF bytes, which the kernel keeps whole.
    const writer = `
      const log = createLogger("info");
      for (let i = 0; i < 4000; i += 1) log.info({ i, pad: "x".repeat(i % 300) }, "line");
      process.exit(0);
    `;
    const script = `import { spawn } from "node:child_process";
      const body = ${JSON.stringify(`import { createLogger } from ${JSON.stringify(loggerModule)};
${writer}`)};
      const kids = [0, 1, 2].map(() => spawn(process.execPath, ["--import", "tsx", "--input-type=module", "-e", body], { stdio: ["ignore", "inherit", "inherit"] }));
      await Promise.all(kids.map((k) => new Promise((r) => k.on("close", r))));`;
    const { code, chunks } = await runScript(script);
    expect(code).toBe(0);
    const lines = chunks
      .map((c) => c.text)
      .join("")
      .trim()
      .split("\n");
    expect(lines).toHaveLength(3 * 4000);
    const broken = lines.filter((line) => {
      try {
        return JSON.parse(line).msg !== "line";
      } catch {
        return true;
      }
    });
    expect(broken).toEqual([]);
  }, 60_000);

  it("writes a lone line of an idle process within the flush interval, not at exit", async () => {
    const { chunks } = await runScript(`
      const log = createLogger("info");
      log.info({ loggedAt: Date.now() }, "alone");
      setTimeout(() => process.exit(0), ${LOG_FLUSH_MS * 4});
    `);
    const first = chunks.find((c) => c.text.includes('"alone"'));
    expect(first).toBeDefined();
    const { loggedAt } = JSON.parse(first!.text.trim().split("\n")[0] as string) as { loggedAt: number };
    // It waits for the flush timer (at most one interval), not for the exit three intervals later.
    expect(first!.at - loggedAt).toBeLessThan(LOG_FLUSH_MS * 2);
  }, 20_000);
});
