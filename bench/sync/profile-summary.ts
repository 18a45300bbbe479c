/**
 * Where a bridge process spends its CPU: self time from a V8 .cpuprofile (written by a bench run
 * with --profile), by package/source file and by function.
 *
 *   npx tsx bench/sync/profile-summary.ts <file.cpuprofile> [--top 25]
 */
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
}

interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** node_modules/<pkg> (or @scope/pkg), a project path, node: internals, or (program)/(gc)/(idle). */
export function bucketOf(url: string, functionName: string): string {
  if (!url) return functionName.startsWith("(") ? functionName : "(native)";
  const nm = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (nm) return `pkg ${nm[1]}`;
  if (url.startsWith("node:")) return url;
  const project = /\/work\/main\/(.*)$/.exec(url.replace(/^file:\/\//, ""));
  return project ? project[1]! : url;
}

export function summariseProfile(profile: Profile, top: number): string {
  const selfUs = new Map<number, number>();
  profile.samples.forEach((id, i) => {
    selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
  });
  const byBucket = new Map<string, number>();
  const byFunction = new Map<string, number>();
  let total = 0;
  for (const node of profile.nodes) {
    const us = selfUs.get(node.id) ?? 0;
    if (us === 0) continue;
    total += us;
    const { functionName, url, lineNumber } = node.callFrame;
    const bucket = bucketOf(url, functionName);
    byBucket.set(bucket, (byBucket.get(bucket) ?? 0) + us);
    const fn = `${functionName || "(anonymous)"}  ${bucket}:${lineNumber + 1}`;
    byFunction.set(fn, (byFunction.get(fn) ?? 0) + us);
  }
  const render = (m: Map<string, number>) =>
    [...m.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(
        ([k, us]) =>
          `${(us / 1e6).toFixed(1).padStart(7)} s ${((100 * us) / total).toFixed(1).padStart(5)} %  ${k}`,
      )
      .join("\n");
  return [
    `sampled ${(total / 1e6).toFixed(1)} s`,
    "",
    "self time by package / file:",
    render(byBucket),
    "",
    "self time by function:",
    render(byFunction),
  ].join("\n");
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: { top: { type: "string", default: "25" } },
  });
  const file = positionals[0];
  if (!file) {
    process.stderr.write("usage: profile-summary.ts <file.cpuprofile> [--top 25]\n");
    process.exit(2);
  }
  process.stdout.write(
    `${summariseProfile(JSON.parse(readFileSync(file, "utf8")) as Profile, Number(values.top))}\n`,
  );
}
