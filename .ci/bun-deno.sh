#!/usr/bin/env bash
# Bun and Deno, each installed from the npm registry at a pinned version: the queue, schedule,
# delivery, fan-out and idempotency contract suites on SQLite (the runtime's own: bun:sqlite,
# node:sqlite) and PostgreSQL, the started engine of test/runtime (real timers, LISTEN/NOTIFY,
# graceful stop, SIGTERM), and the admin app on Bun.serve and Deno.serve. Vitest itself runs in the
# runtime and so do its worker processes, which are the runtime's executable: no test code runs in
# Node (test/runtime/{bun,deno} assert it). The Durable Object cases need workerd and are left to
# the Node run (vitest.{bun,deno}.config.ts filter them out by name).
#
# Expects what .ci/run sets up first: `npm ci` done and PostgreSQL reachable at DATABASE_URL.
# Usage: .ci/bun-deno.sh [bun|deno]...   (both when none is named)
set -euo pipefail
cd "$(dirname "$0")/.."

BUN_VERSION=1.4.5
DENO_VERSION=2.9.6
export DATABASE_URL="${DATABASE_URL:-postgres://postgres@127.0.0.1:5432/test}"
export DENO_NO_UPDATE_CHECK=1 DENO_NO_PROMPT=1

if [ ! -d node_modules/vitest ]; then
  echo "bun-deno: node_modules is missing: run npm ci first" >&2
  exit 1
fi
if ! pg_isready -d "$DATABASE_URL" -q; then
  echo "bun-deno: PostgreSQL is not reachable at $DATABASE_URL (the PostgreSQL suites are never skipped)" >&2
  exit 1
fi

# shellcheck source=.ci/install-runtime.sh
. .ci/install-runtime.sh

run_bun() {
  local bun
  bun="$(install_runtime bun "$BUN_VERSION")"
  echo "bun-deno: Bun $("$bun" --version) at $bun"
  # --bun: a script that would start `node` starts Bun instead, so nothing falls back to Node.
  time "$bun" --bun node_modules/vitest/vitest.mjs run --config vitest.bun.config.ts
}

run_deno() {
  local deno
  deno="$(install_runtime deno "$DENO_VERSION")"
  echo "bun-deno: $("$deno" --version | head -1) at $deno"
  time "$deno" run --allow-all node_modules/vitest/vitest.mjs run --config vitest.deno.config.ts
}

runtimes=("$@")
[ ${#runtimes[@]} -eq 0 ] && runtimes=(bun deno)
for runtime in "${runtimes[@]}"; do
  case "$runtime" in
    bun) run_bun ;;
    deno) run_deno ;;
    *)
      echo "bun-deno: unknown runtime \"$runtime\" (bun or deno)" >&2
      exit 2
      ;;
  esac
done
