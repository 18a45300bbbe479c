import { describe, expect, it } from "vitest";
import { ConfigError, buildConfig } from "../../src/config/load-config.js";

const minimal = {
  platform: { baseUrl: "https://acme.example.com", token: "x" },
  sources: { okta: { tokens: ["t1"] } },
};

function problems(processes: unknown): string[] {
  try {
    buildConfig({ ...minimal, server: { processes } });
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
  return [];
}

describe("server.processes", () => {
  it("is 1 by default: one process, no cluster", () => {
    expect(buildConfig(minimal).server.processes).toBe(1);
    expect(buildConfig({ ...minimal, server: { port: 9000 } }).server.processes).toBe(1);
  });

  it('takes a whole number of at least 1, or "auto"', () => {
    expect(buildConfig({ ...minimal, server: { processes: 1 } }).server.processes).toBe(1);
    expect(buildConfig({ ...minimal, server: { processes: 4 } }).server.processes).toBe(4);
    expect(buildConfig({ ...minimal, server: { processes: "auto" } }).server.processes).toBe("auto");
  });

  it.each([0, -1, "x", 1.5, "2", null])("refuses %j, naming the key", (value) => {
    expect(problems(value)).toEqual([
      'server.processes: must be a whole number of processes, 1 or more, or "auto"',
    ]);
  });
});

describe("server.bodyLimit", () => {
  it("takes body-parser's sizes and names anything else", () => {
    expect(buildConfig({ ...minimal, server: { bodyLimit: "512kb" } }).server.bodyLimit).toBe("512kb");
    expect(buildConfig({ ...minimal, server: { bodyLimit: "2097152" } }).server.bodyLimit).toBe("2097152");
    for (const bad of ["a lot", "1 terabyte", "0", ""]) {
      let problems: string[] = [];
      try {
        buildConfig({ ...minimal, server: { bodyLimit: bad } });
      } catch (err) {
        if (err instanceof ConfigError) problems = err.problems;
      }
      expect(problems.join("\n"), bad).toMatch(/server\.bodyLimit: must be a size such as "1mb"/);
    }
  });
});
