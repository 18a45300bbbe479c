/**
 * Probes n (the operator's surface): what `GET /metrics` exports is what docs/operations.md's
 * "Metrics" table names, both ways (read from the doc itself, so a metric added to either side
 * without the other shows here), and no label value carries what a client put in a URL: an
 * identity provider (or a scanner) asking `/scim/v2/<source>/<userName>` must not mint a series
 * named after a person ("no personal data", and one series per distinct path is unbounded).
 */
import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { E2E_ADMIN_TOKEN, type TestBridge, startTestBridge } from "../helpers/bridge-harness.js";

let h: TestBridge;

beforeAll(async () => {
  h = await startTestBridge("probes-n-metric-labels", {
    sources: { okta: { tokens: ["okta-token"], hooks: { okta: { secret: "okta-hook-secret-n" } } } },
    config: {
      reconcile: { schedule: "0 0 1 1 *", orphans: "report", maxDeprovisionShare: 0.5, keepRuns: 50 },
    },
  });
}, 30_000);
afterAll(async () => {
  await h?.close();
});

/** The metric names of docs/operations.md's "Metrics" section: its table and the gauges its text names. */
function documentedMetrics(): Set<string> {
  const doc = readFileSync(new URL("../../docs/operations.md", import.meta.url), "utf8");
  const section = doc.slice(doc.indexOf("\n## Metrics"), doc.indexOf("\n## Logs"));
  const names = new Set<string>();
  for (const line of section.split("\n")) {
    if (!line.startsWith("| `")) continue;
    const first = line.split("|")[1] ?? "";
    for (const m of first.matchAll(/`([a-z_]+)`/g)) names.add(m[1] as string);
  }
  for (const m of section.matchAll(/gauge `([a-z_]+)`/g)) names.add(m[1] as string);
  return names;
}

/** The bridge's own metric names in a scrape (Node's default process metrics left out). */
function exportedMetrics(text: string): Set<string> {
  const names = new Set<string>();
  for (const m of text.matchAll(/^# TYPE (\S+) \S+$/gm)) {
    const name = m[1] as string;
    if (!name.startsWith("process_") && !name.startsWith("nodejs_")) names.add(name);
  }
  return names;
}

const PERSONAL = ["ada.lovelace", "lovelace", "@example.com", "grace"];

describe("probes n: the metrics an operator scrapes", () => {
  it("are the ones docs/operations.md names, no more and no fewer", async () => {
    const scrape = await h.http.get("/metrics");
    expect(scrape.status).toBe(200);
    const exported = exportedMetrics(scrape.text);
    const documented = documentedMetrics();
    expect(documented.size).toBeGreaterThan(20);
    expect(
      [...documented].filter((n) => !exported.has(n)),
      "documented, not exported",
    ).toEqual([]);
    expect(
      [...exported].filter((n) => !documented.has(n)),
      "exported, not documented",
    ).toEqual([]);
  });

  it("no label value holds what a client put in a SCIM path: the resource label stays one of a few", async () => {
    const scim = { Authorization: "Bearer okta-token" };
    const asked = [
      "/scim/v2/okta/ada.lovelace@example.com",
      "/scim/v2/okta/grace.hopper",
      "/scim/v2/okta/Lovelace/Users",
      "/scim/v2/okta/Users/ada.lovelace@example.com",
      "/scim/v2/okta/Users?filter=userName%20eq%20%22ada.lovelace@example.com%22",
    ];
    for (const path of asked) {
      const res = await h.http.get(path).set(scim);
      expect(res.status, path).toBeGreaterThanOrEqual(200);
    }
    const admin = { Authorization: `Bearer ${E2E_ADMIN_TOKEN}` };
    await h.http.get("/admin/v1/sources/okta/users?userName=ada.lovelace@example.com").set(admin);
    await h.http.get("/admin/v1/sources/okta/users/ada.lovelace@example.com").set(admin);
    await h.http.post("/hooks/okta/ada.lovelace@example.com").send({});

    const text = (await h.http.get("/metrics")).text;
    const series = text.split("\n").filter((l) => l !== "" && !l.startsWith("#"));
    const leaking = series.filter((l) => PERSONAL.some((p) => l.toLowerCase().includes(p)));
    expect(leaking).toEqual([]);
    const resources = new Set(
      series.flatMap((l) =>
        l.startsWith("scim_operations_total{") ? [/resource="([^"]*)"/.exec(l)?.[1]] : [],
      ),
    );
    for (const resource of resources)
      expect([
        "Users",
        "Groups",
        "Bulk",
        "ServiceProviderConfig",
        "Schemas",
        "ResourceTypes",
        "root",
        "other",
      ]).toContain(resource);
  });
});
