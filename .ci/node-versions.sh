#!/usr/bin/env bash
# Node 22 and Node 24, each installed from the npm registry at a pinned version: what can differ by
# Node (vitest.runtimes.config.ts): the slice of the contract suites that each runtime repeats
# (test/support/runtime-slice.ts; SQLite in memory and on disk, PostgreSQL), the SQLite driver tests
# and the started engine of test/runtime. Node 20 (npm test) runs every suite. On these Nodes
# `sqlite()`'s "auto" driver opens node:sqlite, so nothing here needs better-sqlite3, whose native
# module npm ci built for the Node that ran it (its ABI).
# Vitest forks its workers with process.execPath, so the tests run on the Node that runs vitest.
#
# Expects what .ci/run sets up first: `npm ci` done and PostgreSQL reachable at DATABASE_URL.
# Usage: .ci/node-versions.sh [22|24]...   (both when none is named)
set -euo pipefail
cd "$(dirname "$0")/.."

NODE_22_VERSION="${NODE_22_VERSION:-22.23.3}"
NODE_24_VERSION="${NODE_24_VERSION:-24.21.0}"
export DATABASE_URL="${DATABASE_URL:-postgres://postgres@127.0.0.1:5432/test}"

if [ ! -d node_modules/vitest ]; then
  echo "node-versions: node_modules is missing: run npm ci first" >&2
  exit 1
fi
if ! pg_isready -d "$DATABASE_URL" -q; then
  echo "node-versions: PostgreSQL is not reachable at $DATABASE_URL (the PostgreSQL suites are never skipped)" >&2
  exit 1
fi

# shellcheck source=.ci/install-runtime.sh
. .ci/install-runtime.sh

run_node() {
  local version="$1" node
  node="$(install_runtime node "$version")"
  echo "node-versions: Node $("$node" --version) at $node"
  time "$node" node_modules/vitest/vitest.mjs run --config vitest.runtimes.config.ts

}

majors=("$@")
[ ${#majors[@]} -eq 0 ] && majors=(22 24)
for major in "${majors[@]}"; do
  case "$major" in
    22) run_node "$NODE_22_VERSION" ;;
    24) run_node "$NODE_24_VERSION" ;;
    *)
      echo "node-versions: unknown Node \"$major\" (22 or 24)" >&2
      exit 2
      ;;
  esac
done
