#!/usr/bin/env bash
# The package as a consumer gets it. Packs the tarball (prepack builds dist/), lints it with publint
# and @arethetypeswrong/cli, then installs it in fresh projects, one per shape, each with only the
# peers that shape needs:
#   cloudflare  nothing native: tickwork, hono, zod, croner (types: @cloudflare/workers-types, no @types/node)
#   postgres    pg (and @types/pg, for the program's own use of pg)
#   sqlite      better-sqlite3
#   all         better-sqlite3, pg, prom-client, @hono/node-server
# Each project compiles strict, without skipLibCheck, under moduleResolution nodenext and bundler
# with the registry's latest TypeScript (and under nodenext with this repository's), then runs a
# program from .ci/consumer/ importing every subpath the shape can use; a subpath whose peer is
# missing must fail, when called, with TW_MISSING_PEER naming the package. The postgres project also
# require()s tickwork from CommonJS, and the sqlite one runs the installed bin. Prints each shape's
# node_modules size and install time. CONSUMER_SHAPES="postgres sqlite" runs some shapes only.
#
# better-sqlite3's install script downloads a prebuilt binary from GitHub and compiles from source
# when it cannot (minutes on two cores). This script stands in for the download with the binary this
# repository's npm ci built (same version, same Node ABI), handed to prebuild-install as a local
# prebuild; CONSUMER_FROM_SOURCE=1 leaves it out and lets the consumers compile.
set -euo pipefail
cd "$(dirname "$0")/.."
REPO=$PWD
PROGRAMS=$REPO/.ci/consumer
export DATABASE_URL="${DATABASE_URL:-postgres://postgres@127.0.0.1:5432/test}"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/tickwork-consumer.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
NPM_INSTALL=(npm install --no-audit --no-fund --loglevel=error)
NODE_TYPES="@types/node@$(node -p 'process.versions.node.split(".")[0]')"
started=$(date +%s)
now_ms() { date +%s%3N; }
step() { printf '\nconsumer: [%s s] %s\n' "$(($(date +%s) - started))" "$*"; }

step "npm pack"
npm pack --pack-destination "$WORK" >/dev/null
TARBALL=$(ls "$WORK"/tickwork-*.tgz)
tar -tzf "$TARBALL" | grep -q '\.map$' && { echo "consumer: the tarball ships source maps of sources it does not ship"; exit 1; }
printf '%s: %s bytes, %s files\n' "$(basename "$TARBALL")" "$(wc -c <"$TARBALL")" "$(tar -tzf "$TARBALL" | wc -l)"

step "publint"
npx -y publint@0.3 run --strict "$TARBALL"

step "@arethetypeswrong/cli"
# esm-only: tickwork ships ES modules only, so node10 resolution and require() from CommonJS under
# TypeScript's node16 mode are out of scope (Node itself require()s it, as the postgres shape shows).
npx -y @arethetypeswrong/cli@0.18 --profile esm-only "$TARBALL"

SQLITE_VERSION=$(node -p 'require("./node_modules/better-sqlite3/package.json").version')
if [ "${CONSUMER_FROM_SOURCE:-0}" != 1 ]; then
  mkdir -p "$WORK/prebuilds"
  tar -czf "$WORK/prebuilds/better-sqlite3-v$SQLITE_VERSION-node-v$(node -p 'process.versions.modules + "-" + process.platform + "-" + process.arch').tar.gz" \
    -C node_modules/better-sqlite3 build/Release/better_sqlite3.node
  printf 'local-prebuilds=%s\n' "$WORK/prebuilds" >"$WORK/.prebuild-installrc"
fi

SUMMARY=()
# shape <name> <types> <program files> -- <runtime packages> -- <development packages>
shape() {
  local name=$1 types=$2 files=$3
  shift 3
  local runtime=() dev=()
  [ "$1" = -- ] && shift
  while [ $# -gt 0 ] && [ "$1" != -- ]; do runtime+=("$1"); shift; done
  [ $# -gt 0 ] && shift
  dev=("$@")
  local dir=$WORK/$name
  mkdir -p "$dir"
  cd "$dir"
  # npm runs no dependency's install script unless allowScripts says so; a tarball is a non-registry
  # source, so npm also lists tickwork's prepare (a clone's dashboard build), which does not apply.
  node -e 'require("fs").writeFileSync("package.json", JSON.stringify({ name: "consumer-" + process.argv[1], private: true, type: "module", allowScripts: { "better-sqlite3": true, ["file:" + process.argv[2]]: false } }, null, 2))' "$name" "$TARBALL"

  step "$name: npm install tickwork ${runtime[*]}"
  local t0 t1
  t0=$(now_ms)
  "${NPM_INSTALL[@]}" "$TARBALL" "${runtime[@]}"
  t1=$(now_ms)
  local size
  size=$(du -sh node_modules | cut -f1)
  local packages seconds
  packages=$(node -p 'Object.keys(require("./node_modules/.package-lock.json").packages).length')
  seconds=$(awk "BEGIN { printf \"%.1f\", ($t1 - $t0) / 1000 }")
  echo "$name: node_modules $size, $packages packages, installed in $seconds s"
  SUMMARY+=("$(printf '%-10s %-56s %8s %8s %7s s' "$name" "${runtime[*]:-(nothing)}" "$packages" "$size" "$seconds")")

  "${NPM_INSTALL[@]}" -D typescript@latest "${dev[@]}"
  local include
  include=$(printf '"%s",' $files)
  for resolution in nodenext bundler; do
    local module=$resolution emit='"outDir": "out"'
    [ "$resolution" = bundler ] && module=preserve emit='"noEmit": true'
    cat >"tsconfig.$resolution.json" <<EOF
{
  "compilerOptions": {
    "target": "ES2022", "module": "$module", "moduleResolution": "$resolution", "lib": ["ES2023"], "types": [$types],
    "strict": true, "exactOptionalPropertyTypes": true, "noUncheckedIndexedAccess": true, "verbatimModuleSyntax": true,
    "skipLibCheck": false, $emit
  },
  "include": [${include%,}]
}
EOF
  done
  for file in $files; do cp "$PROGRAMS/$file" .; done
  local latest
  latest=$(node -p 'require("typescript/package.json").version')
  step "$name: tsc"
  local ours t
  ours=$(node -p "require('$REPO/node_modules/typescript/package.json').version")
  # This repository's TypeScript under nodenext only: a second full check under bundler would add
  # as much time again and differs from the latest's bundler check in nothing tickwork ships.
  t=$(now_ms)
  "$REPO/node_modules/.bin/tsc" -p tsconfig.nodenext.json --noEmit
  echo "$name: tsc $ours nodenext: clean ($(awk "BEGIN { printf \"%.1f\", ($(now_ms) - $t) / 1000 }") s)"
  for resolution in nodenext bundler; do
    t=$(now_ms)
    node_modules/.bin/tsc -p "tsconfig.$resolution.json"
    echo "$name: tsc $latest $resolution: clean ($(awk "BEGIN { printf \"%.1f\", ($(now_ms) - $t) / 1000 }") s)"
  done
  cd "$REPO"
  step "$name: run"
}

for name in ${CONSUMER_SHAPES:-cloudflare postgres sqlite all}; do
  case $name in
    cloudflare)
      shape cloudflare '"@cloudflare/workers-types"' "worker.ts" -- -- @cloudflare/workers-types
      node "$PROGRAMS/run-worker.mjs" "$WORK/cloudflare" ;;
    postgres)
      shape postgres '"node"' "postgres.ts missing-peer.ts" -- pg -- "$NODE_TYPES" @types/pg
      (cd "$WORK/postgres" && node out/postgres.js && cp "$PROGRAMS/require.cjs" . && node require.cjs) ;;
    sqlite)
      shape sqlite '"node"' "sqlite.ts missing-peer.ts" -- "better-sqlite3@$SQLITE_VERSION" -- "$NODE_TYPES"
      # The installed bin runs dist/ (no sources, no tsx): the default store is ./tickwork.db.
      (cd "$WORK/sqlite" && node out/sqlite.js && node_modules/.bin/tickwork --version && node_modules/.bin/tickwork migrate && test -s tickwork.db) ;;
    all)
      shape all '"node"' "all.ts" -- "better-sqlite3@$SQLITE_VERSION" pg prom-client @hono/node-server -- "$NODE_TYPES" @types/pg
      (cd "$WORK/all" && node out/all.js) ;;
    *) echo "consumer: no shape $name (cloudflare, postgres, sqlite, all)"; exit 2 ;;
  esac
done

step "summary (npm's cache as found; better-sqlite3 $( [ "${CONSUMER_FROM_SOURCE:-0}" = 1 ] && echo "compiled from source" || echo "from a local prebuild"))"
printf '%-10s %-56s %8s %8s %9s\n' shape "peers installed" packages size install
printf '%s\n' "${SUMMARY[@]}"
echo "consumer: passed in $(($(date +%s) - started)) s"
