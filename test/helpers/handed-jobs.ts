/**
 * Jobs of runs and resyncs taken by hand, as a BullMQ worker takes them (each in a queue of its
 * own, under a lock token of its own), so that a test decides when one is handed back to the queue
 * (a forced close: moveToWait with the lock token) or handed over (handed back, then taken by
 * another holder). Queues, takers and the queue connection are closed with `close()`.
 */
import { randomUUID } from "node:crypto";
import { type Job, Queue, Worker } from "bullmq";
import { Redis } from "ioredis";
import { afterAll, beforeAll, expect } from "vitest";
import { buildConfig } from "../../src/config/load-config.js";
import type { Config } from "../../src/config/config-schema.js";
import { TEST_REDIS_URL, deleteKeys, testPrefix } from "./redis-test-prefix.js";

export interface TakenJob {
  job: Job;
  token: string;
  queue: Queue;
  /** The worker that took it (it takes the next job of its queue: handOver). */
  taker: Worker;
}

export class JobTaker {
  readonly connection = new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: null });
  private readonly queues: Queue[] = [];
  private readonly takers: Worker[] = [];

  constructor(
    private readonly prefix: string,
    /** Each queue is named `<name>-<random>`. */
    private readonly name: string,
  ) {}

  /** A job of `data` taken as a worker takes it: active, under a lock token of its own. */
  async take(data: unknown): Promise<TakenJob> {
    const name = `${this.name}-${randomUUID().slice(0, 8)}`;
    const queue = new Queue(name, { connection: this.connection, prefix: this.prefix });
    this.queues.push(queue);
    await queue.add("job", data);
    const taker = new Worker(name, null, {
      connection: this.connection,
      prefix: this.prefix,
      autorun: false,
    });
    this.takers.push(taker);
    const token = randomUUID();
    const job = (await taker.getNextJob(token)) as Job;
    expect(job).toBeDefined();
    return { job, token, queue, taker };
  }

  /** Hands the job back to its queue and has another holder take it. */
  async handOver(taken: TakenJob): Promise<void> {
    await taken.job.moveToWait(taken.token);
    expect(await taken.taker.getNextJob(randomUUID())).toBeDefined();
  }

  async close(): Promise<void> {
    for (const taker of this.takers) await taker.close();
    for (const queue of this.queues) {
      await queue.obliterate({ force: true });
      await queue.close();
    }
    this.connection.disconnect();
  }
}

/**
 * A suite of jobs handed back or over, on a key prefix of its own (`name`): the config of one okta
 * source (its platform unreachable: the tests stub it), a store client (`redis`, connected before
 * the suite's tests) and a JobTaker; all closed and the prefix's keys deleted after the suite.
 */
export function handedJobsSuite(name: string) {
  const prefix = testPrefix(name);
  const config: Config = buildConfig({
    platform: { baseUrl: "http://127.0.0.1:1", token: "t", allowInsecureHttp: true },
    redis: { url: TEST_REDIS_URL, prefix },
    logLevel: "silent",
    sources: { okta: { tokens: ["okta-token"] } },
  });
  const redis = new Redis(TEST_REDIS_URL, { lazyConnect: true });
  let jobs: JobTaker | undefined;
  const taker = (): JobTaker => {
    if (!jobs) throw new Error("the suite's JobTaker is made in its beforeAll");
    return jobs;
  };

  beforeAll(async () => {
    await redis.connect();
    jobs = new JobTaker(prefix, name);
  });

  afterAll(async () => {
    await jobs?.close();
    await deleteKeys(redis, prefix);
    await redis.quit();
  });

  return {
    prefix,
    config,
    redis,
    take: (data: unknown) => taker().take(data),
    handOver: (taken: TakenJob) => taker().handOver(taken),
  };
}
