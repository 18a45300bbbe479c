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

  it("keeps the lines of a batch write in flight on a pipe that another process filled when the process exits", async () => {
    // Another process fills the shared pipe while the reader does not read. The logger's first
    // batch write then finds the pipe full; the process exits before that write's answer came
    // back to it. Before, the write waited in libuv's thread pool (or got EAGAIN there) and was
    // lost at exit: the first ~30 lines were missing.
    const filler = `const fs = await import("node:fs");
      const line = JSON.stringify({ msg: "filler", pad: "y".repeat(200) }) + "\\n";
      const pause = new Int32Array(new SharedArrayBuffer(4));
      for (let k = 0; k < 1000; k += 1) {
        for (;;) {
          try { fs.writeSync(1, line); break; } catch (err) { if (err.code !== "EAGAIN") throw err; Atomics.wait(pause, 0, 0, 10); }
        }
      }`;
    const subject = `import { createLogger } from ${JSON.stringify(loggerModule)};
      const log = createLogger("info");
      for (let i = 0; i < 2000; i += 1) log.info({ i, pad: "x".repeat(i % 300) }, "line");
      process.exit(0);`;
    const script = `import { spawn } from "node:child_process";
      const run = (body) => spawn(process.execPath, ["--import", "tsx", "--input-type=module", "-e", body], { stdio: ["ignore", "inherit", "inherit"] });
      const closed = (child) => new Promise((resolve) => child.on("close", resolve));
      const fill = run(${JSON.stringify(filler)});
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      await Promise.all([closed(fill), closed(run(${JSON.stringify(subject)}))]);`;
    const child = spawn(process.execPath, ["--input-type=module", "-e", script], {
      stdio: ["ignore", "pipe", "inherit"],
    });
    child.stdout.pause();
    await new Promise((resolve) => setTimeout(resolve, 4_000));
    const chunks: Buffer[] = [];
    child.stdout.on("data", (c: Buffer) => chunks.push(c));
    child.stdout.resume();
    const code = await new Promise((resolve) => child.on("close", resolve));
    expect(code).toBe(0);
    const lines = Buffer.concat(chunks).toString().trim().split("\n");
    expect(lines.filter((line) => line.includes('"filler"'))).toHaveLength(1000);
    const seen = lines
      .filter((line) => line.includes('"msg":"line"'))
      .map((line) => (JSON.parse(line) as { i: number }).i)
      .sort((a, b) => a - b);
    expect(seen).toEqual(Array.from({ length: 2_000 }, (_, i) => i));
  }, 30_000);

  it("never blocks the process while the pipe's reader stalls, and writes every line once it reads", async () => {
    // 3,000 lines of ~300 bytes (far more than a pipe holds) logged in bursts while nobody reads:
    // the event loop must keep turning (a 10 ms timer's longest gap is small); the lines wait in
    // memory and come out, in order, once the reader reads. (The script runs under tsx, whose
    // loader also touches process.stdout, so stdout is non-blocking here either way.)
    const script = `import { createLogger } from ${JSON.stringify(loggerModule)};
      const log = createLogger("info");
      let last = Date.now(), worst = 0;
      const tick = setInterval(() => { const now = Date.now(); worst = Math.max(worst, now - last); last = now; }, 10);
      let i = 0;
      const burst = setInterval(() => {
        for (let k = 0; k < 100; k += 1, i += 1) log.info({ i, pad: "x".repeat(250) }, "line");
        if (i >= 3000) {
          clearInterval(burst);
          setTimeout(() => { clearInterval(tick); process.stderr.write("worst gap " + worst + "\\n"); process.exit(worst < 300 ? 0 : 7); }, 100);
        }
      }, 20);`;
    const child = spawn(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], {
      stdio: ["ignore", "pipe", "inherit"],
    });
    child.stdout.pause();
    const exited = new Promise((resolve) => child.on("exit", resolve));
    const closed = new Promise((resolve) => child.on("close", resolve));
    // The process finishes its work while nobody reads its stdout (its exit then waits for the
    // reader to take the last lines)...
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    const chunks: Buffer[] = [];
    child.stdout.on("data", (c: Buffer) => chunks.push(c));
    child.stdout.resume();
    expect(await exited).toBe(0);
    await closed;
    // ... and every line comes out once the reader reads.
    const seen = Buffer.concat(chunks)
      .toString()
      .trim()
      .split("\n")
      .map((line) => (JSON.parse(line) as { i: number }).i);
    expect(seen).toEqual(Array.from({ length: 3_000 }, (_, i) => i));
  }, 30_000);

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
