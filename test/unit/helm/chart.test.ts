import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { Ajv } from "ajv";
import { describe, expect, it } from "vitest";
import { parse as parseYaml, stringify as toYaml } from "yaml";
import { buildConfig } from "../../../src/config/load-config.js";
import { blockBalance, deepMerge, definedAt, renderConfigFile, valuesReferences } from "./chart-helpers.js";

// No helm binary can run here: the chart is checked statically against its own values and schema.
const CHART = "helm/scim-bridge";
const read = (file: string) => readFileSync(join(CHART, file), "utf8");
const templates = readdirSync(join(CHART, "templates")).map((name) => ({
  name,
  text: read(join("templates", name)),
}));
const template = (name: string) => templates.find((t) => t.name === name)!.text;
const defaults = parseYaml(read("values.yaml")) as Record<string, unknown>;
const example = deepMerge(defaults, parseYaml(read("ci/example-values.yaml")));
const schema = JSON.parse(read("values.schema.json"));
const validate = new Ajv({ allErrors: true, strict: false }).compile(schema);

describe("helm chart: values", () => {
  it("Chart.yaml names the chart and its app version", () => {
    const chart = parseYaml(read("Chart.yaml"));
    expect(chart).toMatchObject({ apiVersion: "v2", name: "scim-bridge", type: "application" });
    expect(chart.appVersion).toBe(JSON.parse(readFileSync("package.json", "utf8")).version);
  });

  it("values.yaml and the example install satisfy values.schema.json", () => {
    expect(validate(defaults), JSON.stringify(validate.errors)).toBe(true);
    expect(validate(example), JSON.stringify(validate.errors)).toBe(true);
  });

  it.each([
    ["a misspelt top-level key", { replicas: 3 }],
    ["a replica count that is not a number", { api: { replicaCount: "two" } }],
    ["running as root", { securityContext: { runAsNonRoot: false } }],
    ["privilege escalation", { securityContext: { allowPrivilegeEscalation: true } }],
    ["a Redis prefix without a hash tag", { config: { redis: { prefix: "scim-bridge" } } }],
    ["a source without tokens", { config: { sources: { okta: { target: "workspace" } } } }],
    ["a bad source id", { config: { sources: { "Bad Id": { tokens: ["t"] } } } }],
  ])("the schema refuses %s", (_what, override) => {
    expect(validate(deepMerge(defaults, override))).toBe(false);
  });

  it("every .Values reference in the templates is defined in values.yaml", () => {
    const missing: string[] = [];
    for (const t of templates) {
      for (const path of valuesReferences(t.text)) {
        if (!definedAt(defaults, path)) missing.push(`${t.name}: .Values.${path.join(".")}`);
      }
      // Per-component loops: `$values := index $.Values $component`, then `$values.x.y`.
      for (const m of t.text.matchAll(/\$values((?:\.[A-Za-z_]\w*)+)/g)) {
        const path = m[1]!.slice(1).split(".");
        for (const component of ["api", "worker"])
          if (!definedAt(defaults, [component, ...path]))
            missing.push(`${t.name}: ${component}.${path.join(".")}`);
      }
    }
    expect(missing).toEqual([]);
  });

  it("every template opens and closes its blocks in balance", () => {
    for (const t of templates) expect(blockBalance(t.text), t.name).toBe(0);
  });
});

describe("helm chart: workloads", () => {
  it("the helpers define the standard labels", () => {
    const helpers = template("_helpers.tpl");
    for (const label of [
      "app.kubernetes.io/name:",
      "app.kubernetes.io/instance:",
      "app.kubernetes.io/version:",
      "app.kubernetes.io/component:",
      "app.kubernetes.io/managed-by:",
    ])
      expect(helpers).toContain(label);
  });

  it.each(["api", "worker"])(
    "the %s Deployment runs its role with labels, probes and a restricted context",
    (role) => {
      const text = template(`deployment-${role}.yaml`);
      const labels = `include "scim-bridge.componentLabels" (dict "root" . "component" "${role}")`;
      expect(text.split(labels).length - 1).toBe(2); // the Deployment's and the pod template's
      expect(text).toContain(
        `include "scim-bridge.componentSelectorLabels" (dict "root" . "component" "${role}")`,
      );
      expect(text).toContain(`args: ["start", "--role", "${role}"]`);
      expect(text).toContain('include "scim-bridge.probes" .');
      expect(text).toContain("toYaml .Values.podSecurityContext");
      expect(text).toContain("toYaml .Values.securityContext");
      expect(text).toMatch(/secretRef:\s*\n\s*name: \{\{ include "scim-bridge.secretName" \. \}\}/);
      expect(text).toMatch(/mountPath: \/tmp/); // the root filesystem is read-only
    },
  );

  it("liveness and startup probe /healthz; readiness probes /readyz", () => {
    const probes = /define "scim-bridge.probes"[\s\S]*?\{\{- end \}\}/.exec(template("_helpers.tpl"))![0];
    expect(probes).toMatch(/startupProbe:\s*\n\s*httpGet: \{path: \/healthz, port: http\}/);
    expect(probes).toMatch(/livenessProbe:\s*\n\s*httpGet: \{path: \/healthz, port: http\}/);
    expect(probes).toMatch(/readinessProbe:\s*\n\s*httpGet: \{path: \/readyz, port: http\}/);
  });

  it("the default security context is the restricted profile", () => {
    expect(defaults.securityContext).toMatchObject({
      runAsNonRoot: true,
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      capabilities: { drop: ["ALL"] },
      seccompProfile: { type: "RuntimeDefault" },
    });
    expect(defaults.podSecurityContext).toMatchObject({
      runAsNonRoot: true,
      seccompProfile: { type: "RuntimeDefault" },
    });
  });

  it("has the optional objects an operator expects", () => {
    const kinds = templates.flatMap((t) => [...t.text.matchAll(/^kind: (\w+)/gm)].map((m) => m[1]));
    for (const kind of [
      "Deployment",
      "Service",
      "Ingress",
      "ConfigMap",
      "Secret",
      "PodDisruptionBudget",
      "HorizontalPodAutoscaler",
      "ServiceMonitor",
      "NetworkPolicy",
    ])
      expect(kinds).toContain(kind);
    expect(template("ingress.yaml")).toMatch(/^\{\{- if \.Values\.ingress\.enabled \}\}/);
    expect(template("servicemonitor.yaml")).toMatch(
      /^\{\{- if \.Values\.metrics\.serviceMonitor\.enabled \}\}/,
    );
    expect(template("networkpolicy.yaml")).toMatch(/^\{\{- if \.Values\.networkPolicy\.enabled \}\}/);
    expect(template("secret.yaml")).toContain("(not .Values.secrets.existingSecret)");
  });
});

describe("helm chart: the config file", () => {
  const mountPath = /mountPath: (\/etc\/[\w-]+)\n\s*readOnly: true/.exec(template("deployment-api.yaml"))![1];
  const configEnv = /- name: SCIM_BRIDGE_CONFIG\n\s*value: (\S+)/.exec(template("_helpers.tpl"))![1];

  it("SCIM_BRIDGE_CONFIG names the ConfigMap's key where it is mounted", () => {
    expect(template("configmap.yaml")).toContain(
      "config.yaml: |\n    {{- toYaml .Values.config | nindent 4 }}",
    );
    expect(configEnv).toBe(`${mountPath}/config.yaml`);
  });

  it("the default config's ${VAR}s are all keys of the chart's Secret", () => {
    const vars = [...toYaml(defaults.config).matchAll(/\$\{(\w+)\}/g)].map((m) => m[1]);
    expect(vars.length).toBeGreaterThan(0);
    const secretKeys = Object.keys((defaults.secrets as { values: object }).values);
    for (const v of vars) expect(secretKeys).toContain(v);
    expect(secretKeys).toContain("REDIS_URL");
  });

  it("the default config, rendered, is accepted by the bridge's own loader", () => {
    const config = buildConfig(renderConfigFile(defaults), {
      REDIS_URL: "rediss://redis.example.com:6380",
      PLATFORM_BASE_URL: "https://platform.example.com",
      PLATFORM_TOKEN: "platform-token",
      ADMIN_TOKEN: "admin-token",
    });
    expect(config.redis.prefix).toBe("{scim-bridge}");
    expect(config.redis.url).toBe("rediss://redis.example.com:6380");
    expect(config.server.port).toBe(8080);
  });

  it("the example install's config, rendered, is accepted by the bridge's own loader", () => {
    const config = buildConfig(renderConfigFile(example), {
      REDIS_URL: "redis://redis:6379",
      PLATFORM_BASE_URL: "https://platform.example.com",
      PLATFORM_TOKEN: "platform-token",
      ADMIN_TOKEN: "admin-token",
      OKTA_HOOK_SECRET: "hook-secret",
      ACME_SCIM_TOKEN: "acme-token",
    });
    expect(Object.keys(config.sources).sort()).toEqual(["acme-embed", "okta"]);
    expect(config.platform.requestsPerSecond).toBe(10);
    expect(config.sources["acme-embed"]?.target).toEqual({ embedTenant: "acme" });
  });

  it("a config the bridge refuses is caught by this test", () => {
    const broken = deepMerge(defaults, {
      config: { sources: { okta: { tokens: ["t"], onDelete: "vaporise" } } },
    });
    expect(() =>
      buildConfig(renderConfigFile(broken), {
        PLATFORM_BASE_URL: "https://platform.example.com",
        PLATFORM_TOKEN: "p",
        ADMIN_TOKEN: "a",
      }),
    ).toThrow(/onDelete/);
  });
});
