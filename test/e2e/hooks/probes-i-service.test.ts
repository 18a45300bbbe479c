/**
 * Probes (round i) of the Okta hook service with its directory watched: what the directory passes
 * through while a delivery is applied (a sync may run between any two writes, so a state written
 * for a moment can reach the platform), and writes that lose a race with another process.
 * Real Redis; the directory is the real store with its writes recorded, or interfered with.
 */
import { Registry } from "prom-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RedisDirectoryStore } from "../../../src/directory/redis-directory-store.js";
import type { DirectoryStore } from "../../../src/directory/directory-types.js";
import { HookMetrics } from "../../../src/hooks/hook-metrics.js";
import { HookStateStore } from "../../../src/hooks/hook-state-store.js";
import { parseOktaDelivery } from "../../../src/hooks/okta-event.js";
import { OktaHookService } from "../../../src/hooks/okta-hook-service.js";
import type { Logger } from "../../../src/observability/logger.js";
import { type OktaFixture, oktaDelivery, oktaEvent } from "../../fixtures/hooks/okta-delivery.js";
import { createRecordingDirectory } from "../../helpers/recording-directory.js";
import { deleteKeys, testPrefix } from "../../helpers/redis-test-prefix.js";

const SOURCE = "okta";
const prefix = testPrefix("hooks-probes-i-service");
let store: RedisDirectoryStore;
let state: HookStateStore;
let logger: Logger;
let close: () => Promise<void>;

beforeAll(async () => {
  const made = await createRecordingDirectory(prefix);
  store = made.directory;
  logger = made.logger;
  state = new HookStateStore(made.redis, prefix);
  close = async () => {
    await deleteKeys(made.redis, prefix);
    await made.redis.quit();
  };
});
afterAll(async () => {
  await close?.();
});

let n = 0;
const stamp = Date.now().toString(36);
function oktaUser(tag: string) {
  n++;
  return { id: `00u${tag}${n}s${stamp}`, alternateId: `${tag}${n}.${stamp}@example.com`, displayName: tag };
}
const base = Date.now() - 60_000;
const at = (s: number) => base + s * 1000;

/** A service over `directory` (the store, or a wrapper of it). */
function serviceOver(directory: DirectoryStore) {
  return new OktaHookService({ directory, state, metrics: new HookMetrics(new Registry()), logger });
}

// biome-ignore lint/suspicious/noExplicitAny: fixtures are free-form JSON
const deliver = (service: OktaHookService, events: any[]) =>
  service.handleDelivery(SOURCE, parseOktaDelivery(oktaDelivery(events)));
const event = (name: OktaFixture, overrides: Parameters<typeof oktaEvent>[1]) => oktaEvent(name, overrides);

/** The store, with every user write's `active` recorded per userName. */
function recordingActive() {
  const written = new Map<string, boolean[]>();
  const note = (user: { userName?: unknown; active?: unknown }) => {
    const key = String(user.userName).toLowerCase();
    written.set(key, [...(written.get(key) ?? []), user.active === true]);
  };
  const directory = new Proxy(store, {
    get(target, prop, receiver) {
      if (prop === "createUser")
        return async (...args: Parameters<DirectoryStore["createUser"]>) => {
          const created = await target.createUser(...args);
          note(created.resource);
          return created;
        };
      if (prop === "updateUser")
        return async (...args: Parameters<DirectoryStore["updateUser"]>) => {
          const updated = await target.updateUser(...args);
          note(updated.resource);
          return updated;
        };
      const value = Reflect.get(target, prop, receiver);
      return typeof value === "function" ? value.bind(target) : value;
    },
  }) as DirectoryStore;
  return { directory, written };
}

describe("a staged pre-hire is never active in the directory, not even between two events of a batch", () => {
  it("its membership add listed before its create in one batch: no write ever makes it active", async () => {
    const { directory, written } = recordingActive();
    const service = serviceOver(directory);
    const user = oktaUser("prehire");
    const group = { id: `00g${user.id}`, displayName: `Pre-hires ${user.id}` };
    const summary = await deliver(service, [
      event("group-user-membership-add", { user, group, published: at(2) }),
      event("user-lifecycle-create", { user, published: at(1) }),
    ]);
    expect(summary.outcomes).toEqual({ applied: 2 });
    expect(written.get(user.alternateId.toLowerCase())).toEqual([false]);
    const id = await store.findUserId(SOURCE, { externalId: user.id });
    const stored = id ? await store.getUser(SOURCE, id) : null;
    expect(stored?.resource.active).toBe(false);
    expect(stored?.groups.length).toBe(1);
  });

  it("a create and its activation published in the same millisecond, the activation first: active", async () => {
    const service = serviceOver(store);
    for (const together of [true, false]) {
      const user = oktaUser("samems");
      const activate = event("user-lifecycle-activate", { user, published: at(3) });
      const create = event("user-lifecycle-create", { user, published: at(3) });
      if (together) await deliver(service, [activate, create]);
      else {
        await deliver(service, [activate]);
        await deliver(service, [create]);
      }
      const id = await store.findUserId(SOURCE, { externalId: user.id });
      const stored = id ? await store.getUser(SOURCE, id) : null;
      expect(stored?.resource.active, together ? "one batch" : "two deliveries").toBe(true);
    }
  });
});

describe("a user deleted by another process between the event's read and its write", () => {
  it("the event is decided again (not `rejected`): an older profile update finds the user deleted after it", async () => {
    const setup = serviceOver(store);
    const user = oktaUser("gone");
    await deliver(setup, [event("user-lifecycle-create", { user, published: at(1) })]);
    const id = await store.findUserId(SOURCE, { externalId: user.id });
    expect(id).not.toBeNull();
    // Another process deletes the user (an Okta deletion published later) right before this
    // process's write of an older profile update.
    let interfered = false;
    const racing = new Proxy(store, {
      get(target, prop, receiver) {
        if (prop === "updateUser")
          return async (...args: Parameters<DirectoryStore["updateUser"]>) => {
            if (!interfered) {
              interfered = true;
              await deliver(setup, [event("user-lifecycle-delete-initiated", { user, published: at(5) })]);
            }
            return target.updateUser(...args);
          };
        const value = Reflect.get(target, prop, receiver);
        return typeof value === "function" ? value.bind(target) : value;
      },
    }) as DirectoryStore;
    const summary = await deliver(serviceOver(racing), [
      event("user-account-update-profile", { user: { ...user, displayName: "Renamed" }, published: at(2) }),
    ]);
    expect(interfered).toBe(true);
    expect(summary.outcomes).toEqual({ deleted: 1 });
    expect(await store.findUserId(SOURCE, { externalId: user.id })).toBeNull();
  });
});

describe("a member deleted by another process between a membership add's read and its write", () => {
  it("the add is decided again (not `rejected`): published before the deletion, it is `deleted`", async () => {
    const setup = serviceOver(store);
    const user = oktaUser("gonemember");
    const other = oktaUser("stays");
    const group = { id: `00g${user.id}`, displayName: `Gone member ${user.id}` };
    await deliver(setup, [
      event("user-lifecycle-activate", { user, published: at(1) }),
      event("user-lifecycle-activate", { user: other, published: at(1) }),
      event("group-user-membership-add", { user: other, group, published: at(2) }),
    ]);
    let interfered = false;
    const racing = new Proxy(store, {
      get(target, prop, receiver) {
        if (prop === "updateGroup")
          return async (...args: Parameters<DirectoryStore["updateGroup"]>) => {
            if (!interfered) {
              interfered = true;
              await deliver(setup, [event("user-lifecycle-delete-initiated", { user, published: at(5) })]);
            }
            return target.updateGroup(...args);
          };
        const value = Reflect.get(target, prop, receiver);
        return typeof value === "function" ? value.bind(target) : value;
      },
    }) as DirectoryStore;
    const summary = await deliver(serviceOver(racing), [
      event("group-user-membership-add", { user, group, published: at(3) }),
    ]);
    expect(interfered).toBe(true);
    expect(summary.outcomes).toEqual({ deleted: 1 });
    expect(await store.findUserId(SOURCE, { externalId: user.id })).toBeNull();
  });
});
