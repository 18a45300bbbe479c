/**
 * A rule's label is written to its definition best effort: a PUT the platform refuses never fails
 * the value (the user's data) that met it; a label refused for good, or stored otherwise than asked
 * (trimmed), is not asked again at every value; a transient failure is asked again later. A PUT a
 * long platform pause held back unsent is not a failure of the label: it is not told (the value's
 * write meets the same pause and the sync is put back), and it is asked again later. A PUT the
 * platform itself asked to pause (429, or 503 with Retry-After) is told and rests RELABEL_REST_MS:
 * asked again at the pause's end, it would meet the same 429 and put the user's value back again.
 */
import { describe, expect, it } from "vitest";
import { PlatformError } from "../../../src/platform/platform-error.js";
import type { PlatformClient, UserAttribute } from "../../../src/platform/platform-types.js";
import { AttributeDefinitions, RELABEL_REST_MS } from "../../../src/sync/attribute-definitions.js";

function platformWith(def: UserAttribute, put: (displayName: string) => UserAttribute) {
  let puts = 0;
  const platform = {
    listUserAttributes: async () => [def],
    createUserAttribute: async () => {
      throw new Error("no create expected");
    },
    updateUserAttribute: async (_id: number, input: { displayName?: string }) => {
      puts++;
      return put(input.displayName ?? "");
    },
  } as unknown as PlatformClient;
  return { platform, puts: () => puts };
}

const refused = (transient: boolean) =>
  new PlatformError("PUT /api/v1/user-attributes/1 answered 405", {
    operation: "updateUserAttribute",
    failure: transient ? "server" : "bad_request",
    transient,
    httpStatus: transient ? 503 : 405,
  });

describe("attribute definitions: relabelling", () => {
  it("a PUT refused for good is told, the value's id still answered, and not asked again", async () => {
    const p = platformWith({ id: 1, name: "dept", type: "string", displayName: "Dept" }, () => {
      throw refused(false);
    });
    const told: string[] = [];
    const defs = new AttributeDefinitions(p.platform, (name) => told.push(name));
    await expect(defs.ensure("dept", "string", "Department")).resolves.toBe(1);
    await expect(defs.ensure("dept", "string", "Department")).resolves.toBe(1);
    expect(p.puts()).toBe(1);
    expect(told).toEqual(["dept"]);
  });

  it("a transient failure is asked again at a later value", async () => {
    let fail = true;
    const p = platformWith({ id: 1, name: "dept", type: "string", displayName: "Dept" }, (displayName) => {
      if (fail) throw refused(true);
      return { id: 1, name: "dept", type: "string", displayName };
    });
    const defs = new AttributeDefinitions(p.platform);
    await expect(defs.ensure("dept", "string", "Department")).resolves.toBe(1);
    fail = false;
    await expect(defs.ensure("dept", "string", "Department")).resolves.toBe(1);
    await expect(defs.ensure("dept", "string", "Department")).resolves.toBe(1);
    expect(p.puts()).toBe(2);
  });

  it("a label the platform stores otherwise (trimmed) is not asked again at every value", async () => {
    const p = platformWith({ id: 1, name: "dept", type: "string", displayName: "Dept" }, (displayName) => ({
      id: 1,
      name: "dept",
      type: "string",
      displayName: displayName.trim(),
    }));
    const defs = new AttributeDefinitions(p.platform);
    for (let i = 0; i < 3; i++) await expect(defs.ensure("dept", "string", " Department ")).resolves.toBe(1);
    expect(p.puts()).toBe(1);
  });

  it("a PUT held back unsent by a long platform pause is not told as the label's failure, and is asked again", async () => {
    let held = true;
    const p = platformWith({ id: 1, name: "dept", type: "string", displayName: "Dept" }, (displayName) => {
      if (held) {
        throw new PlatformError("held back: the platform asked for a pause of 120 s", {
          operation: "updateUserAttribute",
          failure: "rate_limited",
          transient: true,
          retryAfterMs: 120_000,
          heldBack: true,
        });
      }
      return { id: 1, name: "dept", type: "string", displayName };
    });
    const told: string[] = [];
    const defs = new AttributeDefinitions(p.platform, (name) => told.push(name));
    await expect(defs.ensure("dept", "string", "Department")).resolves.toBe(1);
    expect(told).toEqual([]);
    held = false;
    await expect(defs.ensure("dept", "string", "Department")).resolves.toBe(1);
    await expect(defs.ensure("dept", "string", "Department")).resolves.toBe(1);
    expect(p.puts()).toBe(2);
    expect(told).toEqual([]);
  });

  it("a PUT the platform answered with a pause rests RELABEL_REST_MS before it is asked again", async () => {
    let limited = true;
    let clock = 1_000_000;
    const p = platformWith({ id: 1, name: "dept", type: "string", displayName: "Dept" }, (displayName) => {
      if (limited) {
        throw new PlatformError("PUT /api/v1/user-attributes/1 answered 429", {
          operation: "updateUserAttribute",
          failure: "rate_limited",
          transient: true,
          httpStatus: 429,
          retryAfterMs: 120_000,
        });
      }
      return { id: 1, name: "dept", type: "string", displayName };
    });
    const told: string[] = [];
    const defs = new AttributeDefinitions(
      p.platform,
      (name) => told.push(name),
      () => clock,
    );
    await expect(defs.ensure("dept", "string", "Department")).resolves.toBe(1);
    expect(told).toEqual(["dept"]);
    // The pause is over, the quota is not: the values are written without asking the label again.
    clock += 120_000;
    await expect(defs.ensure("dept", "string", "Department")).resolves.toBe(1);
    clock += RELABEL_REST_MS - 120_000 - 1;
    await expect(defs.ensure("dept", "string", "Department")).resolves.toBe(1);
    expect(p.puts()).toBe(1);
    limited = false;
    clock += 1;
    await expect(defs.ensure("dept", "string", "Department")).resolves.toBe(1);
    await expect(defs.ensure("dept", "string", "Department")).resolves.toBe(1);
    expect(p.puts()).toBe(2);
    expect(told).toEqual(["dept"]);
  });

  it("a PUT answered 429 without Retry-After (the client's retries spent) rests RELABEL_REST_MS too", async () => {
    let limited = true;
    let clock = 1_000_000;
    const p = platformWith({ id: 1, name: "dept", type: "string", displayName: "Dept" }, (displayName) => {
      if (limited) {
        throw new PlatformError("PUT /api/v1/user-attributes/1 answered 429", {
          operation: "updateUserAttribute",
          failure: "rate_limited",
          transient: true,
          httpStatus: 429,
        });
      }
      return { id: 1, name: "dept", type: "string", displayName };
    });
    const told: string[] = [];
    const defs = new AttributeDefinitions(
      p.platform,
      (name) => told.push(name),
      () => clock,
    );
    // Each value asked again would spend the client's retries on the same quota at every value.
    for (let i = 0; i < 3; i++) await expect(defs.ensure("dept", "string", "Department")).resolves.toBe(1);
    clock += RELABEL_REST_MS - 1;
    await expect(defs.ensure("dept", "string", "Department")).resolves.toBe(1);
    expect(p.puts()).toBe(1);
    limited = false;
    clock += 1;
    await expect(defs.ensure("dept", "string", "Department")).resolves.toBe(1);
    expect(p.puts()).toBe(2);
    expect(told).toEqual(["dept"]);
  });
});
