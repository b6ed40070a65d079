#!/usr/bin/env bash
# Node 22 and Node 24, each installed from the npm registry at a pinned version: every contract
# suite (test/contract: SQLite in memory and on disk, PostgreSQL; the Durable Object cases are left
# to the Node 20 run, below) and the SQLite driver tests. On these Nodes `sqlite()`'s "auto" driver opens node:sqlite, so nothing
# here needs better-sqlite3, whose native module npm ci built for the Node that ran it (its ABI).
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
  # The Durable Object cases run their code in workerd, whatever Node starts miniflare: the Node 20
  # run (npm test) covers them, so these runs leave them out and keep CI inside its time.
  time "$node" node_modules/vitest/vitest.mjs run test/contract test/sqlite/drivers.test.ts --testNamePattern '^(?!.*durable-object)'

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
