/** All of the emulated platform's data, plus the seeded id source and the clock. */
import type { AnswerVariations } from "./answer-variations.js";
import { AttributeStore } from "./attribute-store.js";
import { EmbedStore } from "./embed-store.js";
import { ScimStore } from "./scim-store.js";
import { SeededRandom } from "./seeded-random.js";

export class EmulatorState {
  readonly scim = new ScimStore();
  readonly attributes = new AttributeStore();
  readonly embed: EmbedStore;
  /** Per-user failure codes that bulkUsers reports instead of applying (FORBIDDEN, CONFLICT, INTERNAL). */
  readonly bulkFailures = new Map<string, string>();
  random: SeededRandom;
  /** Answers the contract allows that differ from the defaults (kept across reset). */
  variations: AnswerVariations = {};

  constructor(private readonly seed?: number) {
    this.random = new SeededRandom(seed);
    this.embed = new EmbedStore(() => this.newId());
  }

  newId(): string {
    return this.random.uuid();
  }

  now(): string {
    return new Date().toISOString();
  }

  /** Forgets everything; with a seed, ids start over from the same sequence. */
  reset(): void {
    this.scim.clear();
    this.attributes.clear();
    this.embed.clear();
    this.bulkFailures.clear();
    this.random = new SeededRandom(this.seed);
  }

  /** Deletes a platform user everywhere: SCIM, group memberships and attribute values. */
  deleteUser(id: string): boolean {
    const removed = this.scim.deleteUser(id);
    if (removed) this.attributes.dropUser(id);
    return removed;
  }
}

export interface HandlerContext {
  params: Record<string, string>;
  query: Record<string, string | number | boolean>;
  body: unknown;
  state: EmulatorState;
}

export interface HandlerResult {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
}

export type Handler = (ctx: HandlerContext) => HandlerResult;
