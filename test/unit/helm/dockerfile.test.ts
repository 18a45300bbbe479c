import { execFile } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { createServer as createHttpServer } from "node:http";
import { createServer as createHttpsServer } from "node:https";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { selfSignedCertificate } from "../../../src/platform/emulator/self-signed-cert.js";
import { parse as parseYaml } from "yaml";
import { buildConfig } from "../../../src/config/load-config.js";

/** The Dockerfile split into stages of [instruction, arguments], continuation lines joined. */
interface Stage {
  from: string;
  name?: string;
  steps: Array<{ op: string; args: string }>;
}

function parseDockerfile(text: string): { args: Record<string, string>; stages: Stage[] } {
  const joined = text.replace(/\\\n/g, " ");
  const args: Record<string, string> = {};
  const stages: Stage[] = [];
  for (const raw of joined.split("\n")) {
    const line = raw.trim();
    if (line === "" || line.startsWith("#")) continue;
    const [, op = "", rest = ""] = /^(\S+)\s*(.*)$/.exec(line) ?? [];
    const upper = op.toUpperCase();
    if (upper === "FROM") {
      const m = /^(\S+)(?:\s+AS\s+(\S+))?/i.exec(rest)!;
      stages.push({ from: m[1]!, name: m[2], steps: [] });
    } else if (upper === "ARG" && stages.length === 0) {
      const [name, value = ""] = rest.split("=");
      args[name!] = value;
    } else {
      stages.at(-1)?.steps.push({ op: upper, args: rest });
    }
  }
  return { args, stages };
}

const dockerfile = parseDockerfile(readFileSync("Dockerfile", "utf8"));
const final = dockerfile.stages.at(-1)!;
const stepsOf = (stage: Stage, op: string) => stage.steps.filter((s) => s.op === op).map((s) => s.args);

describe("Dockerfile", () => {
  it("is multi-stage: the build stage compiles with dev dependencies and skips lifecycle scripts", () => {
    expect(dockerfile.stages.length).toBeGreaterThanOrEqual(2);
    const build = dockerfile.stages.find((s) => s.name === "build")!;
    expect(build).toBeDefined();
    const runs = stepsOf(build, "RUN");
    expect(
      runs.some((r) => /npm ci\b/.test(r) && r.includes("--ignore-scripts") && !r.includes("--omit=dev")),
    ).toBe(true);
    expect(runs.some((r) => r.includes("npm run build"))).toBe(true);
  });

  it("builds from an LTS Node image", () => {
    const image = final.from.replace(/^\$\{(\w+)\}$/, (_m, name: string) => dockerfile.args[name] ?? "");
    expect(image).toMatch(/^node:(20|22|24)([.-]|$)/);
    const lts = Number(/^node:(\d+)/.exec(image)![1]);
    expect(lts % 2).toBe(0);
  });

  it("ships production dependencies only, and nothing else from the build stage but dist/", () => {
    const runs = stepsOf(final, "RUN");
    const installs = runs.filter((r) => /npm (ci|install)\b/.test(r));
    expect(installs.length).toBe(1);
    expect(installs[0]).toContain("--omit=dev");
    expect(installs[0]).toContain("--ignore-scripts");
    const fromBuild = stepsOf(final, "COPY").filter((c) => c.includes("--from="));
    expect(fromBuild).toEqual(["--from=build /app/dist ./dist"]);
    const copies = stepsOf(final, "COPY").join("\n");
    expect(copies).not.toMatch(/node_modules/);
    expect(copies).toContain(
      "src/platform/contract/platform-api.yaml ./dist/src/platform/contract/platform-api.yaml",
    );
  });

  it("runs as a non-root user with tini as init, in exec form, the start command by default", () => {
    const users = stepsOf(final, "USER");
    expect(users.length).toBe(1);
    expect(users[0]).not.toMatch(/^(root|0)(:|$)/);
    expect(stepsOf(final, "RUN").some((r) => /apt-get install[^&]*\btini\b/.test(r))).toBe(true);
    const userIndex = final.steps.findIndex((s) => s.op === "USER");
    const lastRun = final.steps.map((s) => s.op).lastIndexOf("RUN");
    expect(userIndex).toBeGreaterThan(lastRun);
    expect(JSON.parse(stepsOf(final, "ENTRYPOINT")[0]!)).toEqual([
      "tini",
      "--",
      "node",
      "dist/src/cli/main.js",
    ]);
    expect(JSON.parse(stepsOf(final, "CMD")[0]!)).toEqual(["start"]);
  });

  it("keeps secrets and local state out of the build context", () => {
    const ignored = readFileSync(".dockerignore", "utf8").split("\n");
    for (const entry of [".git", "node_modules", "dist", ".env", "test"]) expect(ignored).toContain(entry);
  });
});

/** Package names a TypeScript file imports at run time (type-only imports left out). */
function runtimeImports(text: string): string[] {
  const specifiers = [
    ...text.matchAll(/^\s*(?:import|export)\s+(?!type\s)[^;]*?from\s+["']([^"']+)["']/gm),
    ...text.matchAll(/\bimport\(\s*["']([^"']+)["']\s*\)/g),
    ...text.matchAll(/^\s*import\s+["']([^"']+)["']/gm),
  ].map((m) => m[1]!);
  return specifiers
    .filter((s) => !s.startsWith(".") && !s.startsWith("node:"))
    .map((s) => (s.startsWith("@") ? s.split("/").slice(0, 2).join("/") : s.split("/")[0]!));
}

function tsFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return tsFiles(path);
    return entry.name.endsWith(".ts") && !entry.name.endsWith(".d.ts") ? [path] : [];
  });
}

describe("what the image runs", () => {
  it("imports no devDependency at run time (the image has production dependencies only)", () => {
    const pkg = JSON.parse(readFileSync("package.json", "utf8"));
    const dev = new Set(Object.keys(pkg.devDependencies ?? {}));
    const prod = new Set(Object.keys(pkg.dependencies ?? {}));
    const offenders: string[] = [];
    for (const file of ["src", "routes", "jobs"].flatMap(tsFiles)) {
      for (const name of runtimeImports(readFileSync(file, "utf8")))
        if (dev.has(name) && !prod.has(name)) offenders.push(`${file}: ${name}`);
    }
    expect(offenders).toEqual([]);
  });

  it("the import scan sees what it must", () => {
    expect(
      runtimeImports(
        'import { a } from "vitest";\nimport type { B } from "tsx";\nconst x = await import("pino-pretty/x");\nimport "@biomejs/biome";',
      ),
    ).toEqual(["vitest", "pino-pretty", "@biomejs/biome"]);
  });
});

describe("the image's HEALTHCHECK", () => {
  const step = dockerfile.stages.at(-1)?.steps.find((s) => s.op === "HEALTHCHECK");
  const exec = JSON.parse(/CMD\s+(\[.*\])\s*$/.exec(step?.args ?? "")?.[1] ?? "[]") as string[];

  /** Runs the HEALTHCHECK's command with PORT set; answers its exit code. */
  function check(port: number): Promise<number> {
    const [, ...args] = exec;
    return new Promise((resolve) => {
      execFile(process.execPath, args, { env: { PORT: String(port) }, timeout: 10_000 }, (err) =>
        resolve(err ? (typeof err.code === "number" ? err.code : 1) : 0),
      );
    });
  }
  const healthz = (req: { url?: string }, res: { statusCode: number; end(): void }) => {
    res.statusCode = req.url === "/healthz" ? 200 : 404;
    res.end();
  };

  it("is node in exec form, asking /healthz on PORT", () => {
    expect(exec[0]).toBe("node");
    expect(exec.join(" ")).toMatch(/\/healthz/);
  });

  it("passes for a bridge on plain HTTP and under server.tls (HTTPS only), fails when nothing answers", async () => {
    const plain = createHttpServer(healthz);
    const { certPem, keyPem } = selfSignedCertificate({ commonName: "bridge", hosts: ["127.0.0.1"] });
    const tls = createHttpsServer({ cert: certPem, key: keyPem }, healthz);
    try {
      await new Promise<void>((resolve) => plain.listen(0, "127.0.0.1", resolve));
      await new Promise<void>((resolve) => tls.listen(0, "127.0.0.1", resolve));
      expect(await check((plain.address() as AddressInfo).port)).toBe(0);
      expect(await check((tls.address() as AddressInfo).port)).toBe(0);
      const free = (tls.address() as AddressInfo).port;
      await new Promise((resolve) => tls.close(resolve));
      expect(await check(free)).toBe(1);
    } finally {
      plain.close();
      tls.close();
    }
  });
});

describe("docker-compose.yml", () => {
  const compose = parseYaml(readFileSync("docker-compose.yml", "utf8"), { merge: true });

  it("runs Redis with AOF and noeviction, and the api and worker roles of one image", () => {
    const redis = compose.services.redis.command.join(" ");
    expect(redis).toMatch(/--appendonly yes/);
    expect(redis).toMatch(/--maxmemory-policy noeviction/);
    expect(compose.services.api.command).toEqual(["start", "--role", "api"]);
    expect(compose.services.worker.command).toEqual(["start", "--role", "worker"]);
    expect(compose.services.api.image).toBe(compose.services.emulator.image);
    expect(compose.services.emulator.command[0]).toBe("emulator");
    // The image's HEALTHCHECK asks a bridge's /healthz, which the emulator does not serve.
    expect(compose.services.emulator.healthcheck).toEqual({ disable: true });
  });

  it("gives the bridge a config that its own loader accepts", () => {
    const env: Record<string, string> = {};
    for (const [name, value] of Object.entries(compose.services.api.environment as Record<string, string>))
      env[name] = value.replace(/^\$\{\w+:-(.*)\}$/, "$1");
    const text = (compose.configs["bridge-config"].content as string).replaceAll("$$", "$");
    const config = buildConfig(parseYaml(text), env);
    expect(config.redis.url).toBe("redis://redis:6379");
    expect(config.redis.prefix).toBe("{scim-bridge}");
    expect(config.platform.baseUrl).toBe("http://emulator:9090");
    expect(Object.keys(config.sources)).toEqual(["demo"]);
  });
});
