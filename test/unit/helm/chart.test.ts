import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { Ajv } from "ajv";
import { describe, expect, it } from "vitest";
import { parse as parseYaml, stringify as toYaml } from "yaml";
import { buildConfig } from "../../../src/config/load-config.js";
import {
  blockBalance,
  deepMerge,
  definedAt,
  documents,
  gracePeriodNeeded,
  renderConfigFile,
  renderIfs,
  valuesReferences,
} from "./chart-helpers.js";

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
/** The body of one `define` in _helpers.tpl. */
const helper = (name: string) =>
  new RegExp(`define "${name.replace(".", "\\.")}" -\\}\\}([\\s\\S]*?)\\{\\{- end \\}\\}\\n(\\n|$)`).exec(
    template("_helpers.tpl"),
  )![1]!;
const withAdminPort = deepMerge(defaults, { admin: { port: 9090 } });
const withTls = deepMerge(defaults, { tls: { existingSecret: "scim-bridge-tls" } });

describe("helm chart: values", () => {
  it("Chart.yaml names the chart and its app version", () => {
    const chart = parseYaml(read("Chart.yaml"));
    expect(chart).toMatchObject({ apiVersion: "v2", name: "scim-bridge", type: "application" });
    expect(chart.appVersion).toBe(JSON.parse(readFileSync("package.json", "utf8")).version);
  });

  it("values.yaml, the example install and the admin-port and TLS options satisfy values.schema.json", () => {
    for (const values of [defaults, example, withAdminPort, withTls])
      expect(validate(values), JSON.stringify(validate.errors)).toBe(true);
  });

  it("the admin port, TLS and the drain delay are off by default", () => {
    expect(defaults.admin).toMatchObject({ port: 0 });
    expect(defaults.tls).toEqual({ existingSecret: "" });
    expect((defaults.config as { server: object }).server).toMatchObject({ drainDelayMs: 0 });
  });

  it.each([
    ["a misspelt top-level key", { replicas: 3 }],
    ["a replica count that is not a number", { api: { replicaCount: "two" } }],
    ["running as root", { securityContext: { runAsNonRoot: false } }],
    ["privilege escalation", { securityContext: { allowPrivilegeEscalation: true } }],
    ["a Redis prefix without a hash tag", { config: { redis: { prefix: "scim-bridge" } } }],
    ["a source without tokens", { config: { sources: { okta: { target: "workspace" } } } }],
    ["a bad source id", { config: { sources: { "Bad Id": { tokens: ["t"] } } } }],
    ["config.admin.port (the chart sets it from admin.port)", { config: { admin: { port: 9090 } } }],
    [
      "config.server.tls (the chart sets it from tls)",
      { config: { server: { tls: { cert: "c", key: "k" } } } },
    ],
    ["an admin port out of range", { admin: { port: 70000 } }],
    ["a negative drain delay", { config: { server: { drainDelayMs: -1 } } }],
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

  it("liveness and startup probe /healthz; readiness probes /readyz; over HTTPS with TLS on", () => {
    const probes = helper("scim-bridge.probes");
    expect(probes).toContain('$scheme := include "scim-bridge.scheme" .');
    const get = (path: string) => `httpGet: \\{path: ${path}, port: http, scheme: \\{\\{ \\$scheme \\}\\}\\}`;
    expect(probes).toMatch(new RegExp(`startupProbe:\\s*\\n\\s*${get("/healthz")}`));
    expect(probes).toMatch(new RegExp(`livenessProbe:\\s*\\n\\s*${get("/healthz")}`));
    expect(probes).toMatch(new RegExp(`readinessProbe:\\s*\\n\\s*${get("/readyz")}`));
    const scheme = helper("scim-bridge.scheme");
    expect(renderIfs(scheme, defaults).trim()).toBe("HTTP");
    expect(renderIfs(scheme, withTls).trim()).toBe("HTTPS");
    expect(template("servicemonitor.yaml")).toContain('scheme: {{ include "scim-bridge.scheme" . | lower }}');
  });

  it.each(["api", "worker"] as const)(
    "the %s pods mount the TLS Secret read-only only when tls.existingSecret is set",
    (role) => {
      const text = template(`deployment-${role}.yaml`);
      expect(text).toContain('{{- include "scim-bridge.tlsVolumeMount" . | nindent 12 }}');
      expect(text).toContain('{{- include "scim-bridge.tlsVolume" . | nindent 8 }}');
      const mount = helper("scim-bridge.tlsVolumeMount");
      expect(renderIfs(mount, defaults).trim()).toBe("");
      expect(renderIfs(mount, withTls)).toMatch(
        /- name: tls\n\s*mountPath: \{\{ include "scim-bridge.tlsDir" \. \}\}\n\s*readOnly: true/,
      );
      const volume = renderIfs(helper("scim-bridge.tlsVolume"), withTls);
      expect(volume).toMatch(/secretName: \{\{ \.Values\.tls\.existingSecret \}\}/);
      expect(volume).toContain("{key: tls.crt, path: tls.crt}, {key: tls.key, path: tls.key}");
      expect(renderIfs(helper("scim-bridge.tlsVolume"), defaults).trim()).toBe("");
    },
  );

  it.each(["api", "worker"] as const)(
    "the %s's terminationGracePeriodSeconds covers preStop, drain and shutdown, or the render fails",
    (role) => {
      expect(template(`deployment-${role}.yaml`)).toContain(
        `terminationGracePeriodSeconds: {{ include "scim-bridge.terminationGracePeriod" (dict "root" . "component" "${role}" "grace" .Values.${role}.terminationGracePeriodSeconds`,
      );
      const helperText = helper("scim-bridge.terminationGracePeriod");
      expect(helperText).toContain(
        "(default 0 $server.drainDelayMs) (default 10000 $server.shutdownTimeoutMs) 999",
      );
      expect(helperText).toContain("$needed := add (default 0 .preStop) (div $stopMs 1000) 5");
      expect(helperText).toMatch(/if lt \(int \.grace\) \(int \$needed\) \}\}\n\{\{- fail/);
      const grace = (values: Record<string, unknown>) =>
        (values[role] as { terminationGracePeriodSeconds: number }).terminationGracePeriodSeconds;
      for (const values of [defaults, example])
        expect(grace(values)).toBeGreaterThanOrEqual(gracePeriodNeeded(values, role));
      // A longer shutdown than the grace period allows is refused, not silently cut by SIGKILL.
      const slow = deepMerge(defaults, {
        config: { server: { shutdownTimeoutMs: 60_000, drainDelayMs: 5_000 } },
      });
      expect(grace(slow)).toBeLessThan(gracePeriodNeeded(slow, role));
    },
  );

  it("the api's preStop pause is consistent with the drain delay the process adds", () => {
    expect(gracePeriodNeeded(defaults, "api")).toBe(5 + 10 + 5);
    const drained = deepMerge(defaults, { config: { server: { drainDelayMs: 2_500 } } });
    expect(gracePeriodNeeded(drained, "api")).toBe(5 + 13 + 5);
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

describe("helm chart: the admin port", () => {
  const objects = (file: string, values: Record<string, unknown>) =>
    documents(renderIfs(template(file), values));
  const named = (docs: string[], suffix: string) =>
    docs.filter((d) => d.includes(`name: {{ include "scim-bridge.fullname" . }}${suffix}\n`));

  it("the <fullname>-admin Service exists only when admin.port is set, and targets the admin port", () => {
    expect(named(objects("service.yaml", defaults), "-admin")).toEqual([]);
    const [admin, ...more] = named(objects("service.yaml", withAdminPort), "-admin");
    expect(more).toEqual([]);
    expect(admin).toMatch(/kind: Service\n/);
    expect(admin).toContain("type: ClusterIP");
    expect(admin).toMatch(
      /- name: admin\n\s*port: \{\{ \.Values\.admin\.service\.port \}\}\n\s*targetPort: admin\n/,
    );
    expect(admin).toContain('(dict "root" . "component" "api")');
  });

  it("the main Service and the Ingress never route to the admin port", () => {
    for (const values of [defaults, withAdminPort]) {
      const [main] = named(objects("service.yaml", values), "");
      expect(main).toMatch(/targetPort: http\n/);
      expect(main).not.toMatch(/admin/);
    }
    const ingress = renderIfs(
      template("ingress.yaml"),
      deepMerge(withAdminPort, { ingress: { enabled: true } }),
    );
    expect(ingress).toContain("name: {{ $fullName }}\n");
    expect(ingress).toContain("$port := .Values.service.port");
    expect(ingress).not.toMatch(/admin/);
  });

  it("the api container gets a port named admin only when admin.port is set", () => {
    const port = /- name: admin\n\s*containerPort: \{\{ \.Values\.admin\.port \}\}\n/;
    expect(renderIfs(template("deployment-api.yaml"), defaults)).not.toMatch(port);
    const api = renderIfs(template("deployment-api.yaml"), withAdminPort);
    expect(api).toMatch(port);
    expect(api).not.toContain("fail");
    // Equal to the main port: the render fails.
    const clash = deepMerge(defaults, { admin: { port: 8080 } });
    expect(renderIfs(template("deployment-api.yaml"), clash)).toContain(
      '{{- fail "admin.port must differ from containerPort" }}',
    );
    expect(template("deployment-worker.yaml")).not.toContain("admin");
  });

  it("the api's NetworkPolicy admits networkPolicy.adminFrom to the admin port, this namespace when empty", () => {
    const on = { networkPolicy: { enabled: true } };
    const [plain] = objects("networkpolicy.yaml", deepMerge(defaults, on));
    expect(plain).not.toMatch(/port: admin/);
    const [api] = objects("networkpolicy.yaml", deepMerge(withAdminPort, on));
    const [mainRule, adminRule, ...rest] = api!.split(/\n {4}- ports:/).slice(1);
    expect(rest).toEqual([]);
    expect(mainRule).toMatch(/- port: http\n/);
    expect(mainRule).not.toMatch(/admin/);
    expect(adminRule).toMatch(/- port: admin\n/);
    expect(adminRule).toMatch(/from:\n\s*- podSelector: \{\}/);
    const peers = [{ namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": "ops" } } }];
    const [limited] = objects(
      "networkpolicy.yaml",
      deepMerge(withAdminPort, { networkPolicy: { enabled: true, adminFrom: peers } }),
    );
    expect(limited).toContain("toYaml .Values.networkPolicy.adminFrom");
    expect(limited).not.toMatch(/- podSelector: \{\}\n\s*\{\{- end/);
  });
});

describe("helm chart: the config file", () => {
  const mountPath = /mountPath: (\/etc\/[\w-]+)\n\s*readOnly: true/.exec(template("deployment-api.yaml"))![1];
  const configEnv = /- name: SCIM_BRIDGE_CONFIG\n\s*value: (\S+)/.exec(template("_helpers.tpl"))![1];
  const tlsDir = "/etc/scim-bridge-tls";

  it("SCIM_BRIDGE_CONFIG names the ConfigMap's key where it is mounted", () => {
    expect(template("configmap.yaml")).toContain(
      'config.yaml: |\n    {{- include "scim-bridge.configFile" . | nindent 4 }}',
    );
    expect(configEnv).toBe(`${mountPath}/config.yaml`);
  });

  it("the configFile helper is what renderConfigFile mirrors: .Values.config plus admin.port and server.tls", () => {
    const body = helper("scim-bridge.configFile");
    expect(body).toContain("$config := deepCopy .Values.config");
    expect(body).toMatch(
      /\{\{- if \.Values\.admin\.port \}\}\n.*set \$config "admin" \(merge \(dict "port" \.Values\.admin\.port\) \(default \(dict\) \$config\.admin\)\)/,
    );
    expect(body).toMatch(/\{\{- if \.Values\.tls\.existingSecret \}\}/);
    expect(body).toContain('dict "cert" (printf "%s/tls.crt" $dir) "key" (printf "%s/tls.key" $dir)');
    expect(body).toContain('set $config "server" (merge (dict "tls" $tls) (default (dict) $config.server))');
    expect(body).toContain("toYaml $config");
    expect(helper("scim-bridge.tlsDir").trim()).toBe(tlsDir);
    expect(tlsDir).not.toBe(mountPath); // no nested mount inside the ConfigMap volume
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
    expect(config.admin.port).toBeUndefined();
    expect(config.server.tls).toBeUndefined();
    expect(config.server.drainDelayMs).toBe(0);
  });

  it("with admin.port and TLS set, the rendered config is accepted and points at the mounted files", () => {
    const values = deepMerge(example, {
      admin: { port: 9090 },
      tls: { existingSecret: "scim-tls" },
      config: { server: { drainDelayMs: 3000 } },
    });
    expect(validate(values), JSON.stringify(validate.errors)).toBe(true);
    const config = buildConfig(renderConfigFile(values, tlsDir), {
      REDIS_URL: "redis://redis:6379",
      PLATFORM_BASE_URL: "https://platform.example.com",
      PLATFORM_TOKEN: "platform-token",
      ADMIN_TOKEN: "admin-token",
      OKTA_HOOK_SECRET: "hook-secret",
      ACME_SCIM_TOKEN: "acme-token",
    });
    expect(config.admin.port).toBe(9090);
    expect(config.admin.tokens).toEqual(["admin-token"]);
    expect(config.server.tls).toEqual({ cert: `${tlsDir}/tls.crt`, key: `${tlsDir}/tls.key` });
    expect(config.server.shutdownTimeoutMs).toBe(10_000);
    expect(config.server.drainDelayMs).toBe(3000);
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
