import { describe, expect, it } from "vitest";
import { ConfigError, buildConfig } from "../../src/config/load-config.js";

function problemsOf(raw: unknown): string[] {
  try {
    buildConfig(raw, {});
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
  return [];
}

const platform = { baseUrl: "https://acme.example.com", token: "t" };

/**
 * "Bad config stops the start with every problem named": a bad source id or attribute name is
 * named with what a good one looks like, and the problems of the value under it are named too.
 */
describe("config: bad source ids and attribute names", () => {
  it("names a bad source id, and every problem of the source under it", () => {
    const problems = problemsOf({
      platform,
      sources: {
        Okta_Prod: {
          tokens: [],
          attributes: { dept: { from: "title", type: "strin" } },
        },
      },
    });
    expect(problems).toContainEqual(
      expect.stringMatching(/^sources\.Okta_Prod: source ids are lower-case letters, digits, - and _/),
    );
    expect(problems).toContainEqual(
      expect.stringMatching(/^sources\.Okta_Prod\.tokens: a source needs at least one token/),
    );
    expect(problems).toContainEqual(expect.stringMatching(/^sources\.Okta_Prod\.attributes\.dept\.type: /));
    expect(problems.join("\n")).not.toContain("Invalid key in record");
  });

  it("names a bad attribute name, and the problems of its rule", () => {
    const problems = problemsOf({
      platform,
      sources: { okta: { tokens: ["t1"], attributes: { "1dept": { from: "title", type: "strin" } } } },
    });
    expect(problems).toContainEqual(
      expect.stringMatching(/^sources\.okta\.attributes\.1dept: attribute names start with a letter/),
    );
    expect(problems).toContainEqual(expect.stringMatching(/^sources\.okta\.attributes\.1dept\.type: /));
    expect(problems.join("\n")).not.toContain("Invalid key in record");
  });

  it("refuses two attribute names that differ only in case (one platform definition, flipped by every resync)", () => {
    const problems = problemsOf({
      platform,
      sources: {
        okta: {
          tokens: ["t1"],
          attributes: {
            dept: { from: "title", type: "string" },
            Dept: { from: "department", type: "string" },
          },
        },
        entra: { tokens: ["t2"], attributes: { Dept: { from: "title", type: "string" } } },
      },
    });
    expect(problems).toEqual([
      expect.stringMatching(/^sources\.okta\.attributes\.Dept: "Dept" and "dept" are one platform attribute/),
    ]);
  });

  it("refuses rules of two sources that give one platform attribute two types or two labels", () => {
    const problems = problemsOf({
      platform,
      sources: {
        okta: {
          tokens: ["t1"],
          attributes: {
            dept: { from: "title", type: "string", displayName: "Department" },
            level: { from: "title", type: "number" },
          },
        },
        entra: {
          tokens: ["t2"],
          attributes: {
            Dept: { from: "department", type: "string", displayName: "Dept." },
            level: { from: "title", type: "string" },
          },
        },
      },
    });
    expect(problems.sort()).toEqual([
      expect.stringMatching(
        /^sources\.entra\.attributes\.Dept\.displayName: is one platform attribute with the rule of source okta, whose displayName is "Department"/,
      ),
      expect.stringMatching(
        /^sources\.entra\.attributes\.level\.type: is one platform attribute with sources\.okta\.attributes\.level, whose type is number/,
      ),
    ]);
  });

  it("accepts one attribute in several sources with one type, a label given once or alike", () => {
    const rule = { from: "title", type: "string" };
    expect(
      problemsOf({
        platform,
        sources: {
          okta: { tokens: ["t1"], attributes: { dept: { ...rule, displayName: "Department" } } },
          entra: { tokens: ["t2"], attributes: { DEPT: rule } },
          hr: { tokens: ["t3"], attributes: { dept: { ...rule, displayName: "Department" } } },
        },
      }),
    ).toEqual([]);
  });

  it("refuses attribute rules on an embed-tenant source (its users are embed users; they would be ignored)", () => {
    for (const target of [{ embedTenant: "acme" }, { embedTenantFromGroup: { pattern: "^(\\w+)-" } }]) {
      const problems = problemsOf({
        platform,
        sources: {
          hr: { tokens: ["t1"], target, attributes: { dept: { from: "title", type: "string" } } },
          plain: { tokens: ["t2"], target },
        },
      });
      expect(problems).toEqual([
        expect.stringMatching(/^sources\.hr\.attributes: attribute values are set on workspace users/),
      ]);
    }
  });

  it("still accepts good ids and names, and still refuses a sources value that is no mapping", () => {
    const config = buildConfig({
      platform,
      sources: {
        "okta-prod_2": { tokens: ["t1"], attributes: { dept_2: { from: "title", type: "string" } } },
      },
    });
    expect(Object.keys(config.sources)).toEqual(["okta-prod_2"]);
    expect(Object.keys(config.sources["okta-prod_2"]!.attributes)).toEqual(["dept_2"]);
    expect(problemsOf({ platform, sources: ["okta"] })).toEqual([expect.stringMatching(/^sources: /)]);
  });
});
