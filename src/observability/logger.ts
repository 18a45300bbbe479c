import { fstatSync, writeSync } from "node:fs";
import { pino, type DestinationStream, type Logger, type LoggerOptions } from "pino";

/** Paths that never reach a log line. Shared by every logger and by pino-http. */
export const REDACT_PATHS = [
  "authorization",
  "Authorization",
  "token",
  "tokens",
  "secret",
  "password",
  "*.authorization",
  "*.Authorization",
  "*.token",
  "*.tokens",
  "*.secret",
  "*.password",
  "req.headers.authorization",
  "req.headers.cookie",
  'req.headers["x-okta-verification-challenge"]',
  'req.headers["webhook-signature"]',
  'res.headers["set-cookie"]',
  "headers.authorization",
  "platform.token",
];

/** The most bytes of log lines that wait in memory for a stalled stdout (memory stays bounded). */
export const LOG_BUFFER_LIMIT = 16 * 1024 * 1024;
/**
 * The most bytes one write system call carries: PIPE_BUF on Linux, the size up to which the kernel
 * writes to a pipe atomically. Each write holds whole lines (sonic-boom never splits a line across
 * writes), so the lines of several processes sharing one stdout (`start --processes N`, a
 * container runtime's pipe) never interleave, without a process in between to sort them.
 */
export const LOG_WRITE_MAX_BYTES = 4096;
/** Lines are written once this many bytes are waiting ... */
export const LOG_WRITE_BYTES = 3072;
/** ... or at the latest after this long. */
export const LOG_FLUSH_MS = 1000;

/**
 * Stdout, written in batches: lines go out once LOG_WRITE_BYTES are waiting, or after LOG_FLUSH_MS,
 * in writes of whole lines of at most LOG_WRITE_MAX_BYTES. A busy intake then makes one write system
 * call per few dozen request lines instead of one per line (measured: about 0.05 ms of CPU less per
 * SCIM create). What waits is written synchronously when the process exits (also after
 * `process.exit` and fatal errors); only a SIGKILL can lose the last second's lines. Should stdout's
 * reader stall, at most LOG_BUFFER_LIMIT bytes wait in memory; lines past that are dropped, never
 * the process blocked. A single line longer than LOG_WRITE_MAX_BYTES (a long stack trace) is
 * written whole, and may then interleave with another process's line.
 *
 * A pipe or socket (a container runtime's, or the one `start --processes N` shares) gets PipeDestination:
 * every write is made here, on the main thread, so the exit flush always knows what was written.
 * pino's sonic-boom writes from libuv's thread pool instead; a write there that met a full pipe
 * (EAGAIN) or still waited when the process exited was lost with its ~30 lines. A file or a
 * terminal keeps sonic-boom.
 */
export function stdoutDestination(): DestinationStream {
  if (isPipe(1)) {
    // Node's stdout stream makes a pipe or socket non-blocking (as any console.log would): the
    // destination's writes then never wait.
    void process.stdout;
    return new PipeDestination(1);
  }
  return pino.destination({
    dest: 1,
    sync: false,
    minLength: LOG_WRITE_BYTES,
    maxWrite: LOG_WRITE_MAX_BYTES,
    maxLength: LOG_BUFFER_LIMIT,
    periodicFlush: LOG_FLUSH_MS,
  });
}

/** A pipe or a socket (what node:child_process gives a child), not a file or a terminal. */
function isPipe(fd: number): boolean {
  try {
    const stat = fstatSync(fd);
    return stat.isFIFO() || stat.isSocket();
  } catch {
    return false;
  }
}

/** How long a write that found the pipe full waits before it tries again. */
const PIPE_RETRY_MS = 20;
/** At exit, how long the last lines may wait for a full pipe's reader before they are given up. */
const EXIT_FLUSH_LIMIT_MS = 10_000;

/**
 * Log lines to a pipe, batched into whole-line writes of at most LOG_WRITE_MAX_BYTES (PIPE_BUF: the
 * kernel writes them whole, so the lines of several processes never interleave). Writes are
 * synchronous system calls and never wait: stdoutDestination makes the pipe non-blocking, so a full
 * pipe answers EAGAIN (a blocking one would wait in write). On EAGAIN the lines stay here and the
 * write is tried again after PIPE_RETRY_MS. At exit everything waiting is written, waiting for the
 * reader up to EXIT_FLUSH_LIMIT_MS.
 */
export class PipeDestination implements DestinationStream {
  readonly #fd: number;
  #lines: string[] = [];
  /** Bytes of each waiting line (the same index as #lines). */
  #sizes: number[] = [];
  #bytes = 0;
  /** What a partial write left of the line being written (only a line longer than PIPE_BUF). */
  #rest: Buffer | undefined;
  #timer: NodeJS.Timeout | undefined;
  /** The pipe answered EAGAIN: wait for the retry timer. */
  #full = false;
  /** The reader is gone (EPIPE): nothing more is written. */
  #closed = false;

  constructor(fd: number) {
    this.#fd = fd;
    process.on("exit", () => this.flushSync());
  }

  write(line: string): boolean {
    if (this.#closed) return true;
    const size = Buffer.byteLength(line);
    if (this.#bytes + size > LOG_BUFFER_LIMIT) return true; // a stalled reader: the line is dropped
    this.#lines.push(line);
    this.#sizes.push(size);
    this.#bytes += size;
    if (this.#full) return true;
    if (this.#bytes >= LOG_WRITE_BYTES) this.#writeWaiting();
    else this.#schedule(LOG_FLUSH_MS);
    return true;
  }

  /** Writes what waits now (pino's logger.flush). */
  flush(cb?: (err?: Error) => void): void {
    if (!this.#full) this.#writeWaiting();
    cb?.();
  }

  /** Writes everything that waits, waiting for a full pipe's reader (bounded): the exit flush. */
  flushSync(): void {
    const deadline = Date.now() + EXIT_FLUSH_LIMIT_MS;
    const pause = new Int32Array(new SharedArrayBuffer(4));
    while (!this.#writeWaiting() && Date.now() < deadline) Atomics.wait(pause, 0, 0, 5);
  }

  /** Writes batches until nothing waits (true) or the pipe is full or gone (false). */
  #writeWaiting(): boolean {
    // Writing now: a flush timer still armed is moot, and a full pipe must arm the retry's.
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#full = false;
    while (!this.#closed && (this.#rest !== undefined || this.#lines.length > 0)) {
      const chunk = this.#rest ?? this.#takeBatch();
      let written: number;
      try {
        written = writeSync(this.#fd, chunk);
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code;
        this.#rest = chunk;
        if (code === "EAGAIN") {
          this.#full = true;
          this.#schedule(PIPE_RETRY_MS);
          return false;
        }
        // EPIPE (the reader is gone) or another failure of stdout: logging stops, the process goes on.
        this.#closed = true;
        this.#lines = [];
        this.#sizes = [];
        this.#bytes = 0;
        this.#rest = undefined;
        return false;
      }
      this.#rest = written < chunk.length ? chunk.subarray(written) : undefined;
    }
    return !this.#closed;
  }

  /** The next write: whole lines up to LOG_WRITE_MAX_BYTES, or one longer line alone. */
  #takeBatch(): Buffer {
    let count = 0;
    let bytes = 0;
    while (count < this.#lines.length) {
      const size = this.#sizes[count] as number;
      if (count > 0 && bytes + size > LOG_WRITE_MAX_BYTES) break;
      bytes += size;
      count += 1;
    }
    const batch = this.#lines.splice(0, count).join("");
    this.#sizes.splice(0, count);
    this.#bytes -= bytes;
    return Buffer.from(batch);
  }

  #schedule(ms: number): void {
    if (this.#timer !== undefined) return;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      this.#writeWaiting();
    }, ms);
    this.#timer.unref();
  }
}

/**
 * pino's error serializer, without the arguments of a Redis command. ioredis puts the command an
 * error reply answered on the error (`command: {name, args}`), and its arguments are personal data
 * often: key names (the email index's holds the email), hash fields that are userNames, a script's
 * arguments that are whole user records. The line keeps the reply and the command's name.
 */
export function serializeError(err: unknown): unknown {
  return scrubError(err, 0);
}

/** The errors an error carries: MULTI's EXECABORT (`previousErrors`), AggregateError's, `cause`. */
const NESTED_ERRORS = ["previousErrors", "aggregateErrors", "errors"] as const;

function scrubError(err: unknown, depth: number): unknown {
  const serialized = pino.stdSerializers.err(err as Error) as unknown;
  if (typeof serialized !== "object" || serialized === null) return serialized;
  const out: Record<string, unknown> = { ...(serialized as Record<string, unknown>) };
  const command = out["command"];
  if (typeof command === "object" && command !== null) {
    const name = (command as { name?: unknown }).name;
    out["command"] = typeof name === "string" ? { name } : "[redacted]";
  }
  for (const key of NESTED_ERRORS) {
    const nested = out[key];
    if (Array.isArray(nested)) {
      out[key] = depth < 3 ? nested.map((e) => scrubError(e, depth + 1)) : "[redacted]";
    }
  }
  if (typeof out["cause"] === "object" && out["cause"] !== null) {
    out["cause"] = depth < 3 ? scrubError(out["cause"], depth + 1) : "[redacted]";
  }
  return out;
}

/** The root logger. `destination` (default: stdoutDestination()) lets tests capture the output. */
export function createLogger(
  level: string = "info",
  options: LoggerOptions = {},
  destination?: DestinationStream,
): Logger {
  const merged: LoggerOptions = {
    level,
    base: { service: "scim-bridge" },
    redact: { paths: REDACT_PATHS, censor: "[redacted]" },
    serializers: { err: serializeError },
    ...options,
  };
  return pino(merged, destination ?? stdoutDestination());
}

export type { Logger };
