#!/usr/bin/env bash
# Where a PostgreSQL system's server time goes, statement by statement: starts a PostgreSQL cluster
# of its own (port 5433 unless PROFILE_PORT, in a temporary directory, pg_stat_statements loaded;
# the machine's shared server is never touched), runs one repetition of each given workload for each
# given system of `bench:peers` against it, and prints, per job, the calls and the server time of the
# statements that ran while the workload did: its enqueue included, and the harness's warm-up (1,000
# no-op jobs and 10 single ones, counted in the jobs); schema changes left out.
#
#   bash bench/peers/profile-statements.sh "tickwork.postgres.defaults graphile-worker.tuned" "run.c10 run.c50.2k"
#
# Statements per job are round trips per job; their time is the server's execution time only
# (parse, plan, commit and the wait for the WAL flush are not in it). Run on a quiet machine for times.
set -euo pipefail
cd "$(dirname "$0")/../.."

systems=${1:?systems, space-separated ids}
workloads=${2:?workloads, space-separated ids}
port=${PROFILE_PORT:-5433}
bin=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)
dir=$(mktemp -d /tmp/tw-profile-XXXXXX)
chown postgres "$dir"
as_postgres() { if [ "$(id -u)" = 0 ]; then su postgres -c "$*"; else bash -c "$*"; fi; }

as_postgres "$bin/initdb -D $dir/data -A trust -U postgres" >"$dir/initdb.log"
cat >>"$dir/data/postgresql.conf" <<EOF
port = $port
listen_addresses = '127.0.0.1'
unix_socket_directories = '$dir'
shared_preload_libraries = 'pg_stat_statements'
pg_stat_statements.track = all
pg_stat_statements.max = 10000
EOF
as_postgres "$bin/pg_ctl -D $dir/data -l $dir/server.log start -w" >/dev/null
trap 'as_postgres "$bin/pg_ctl -D $dir/data stop -m fast" >/dev/null; rm -rf "$dir"' EXIT
psql() { command psql -X -q -h 127.0.0.1 -p "$port" -U postgres "$@"; }
psql postgres -c "CREATE DATABASE test"
psql test -c "CREATE EXTENSION pg_stat_statements"

# Not counted: the profile's own query, and schema changes (migrations, DROP SCHEMA of each namespace).
kept="query NOT LIKE '%pg_stat_statements%' AND query !~* '^\\s*(--|create|drop|alter|comment|do |set |show )' AND query !~* 'information_schema|pg_catalog|pg_namespace'"
npx -y -p node@22.23.3 -- npm --prefix bench/peers install --no-audit --no-fund >/dev/null
for workload in $workloads; do
  for system in $systems; do
    psql test -c "SELECT pg_stat_statements_reset()" >/dev/null
    DATABASE_URL="postgres://postgres@127.0.0.1:$port/test" npx -y node@22.23.3 --import tsx bench/peers/main.ts \
      --reps 1 --systems "$system" --workloads "$workload" --producer-seconds "${PRODUCER_SECONDS:-10}" --out "$dir/out" >"$dir/run.log" 2>&1 ||
      { cat "$dir/run.log"; exit 1; }
    # The workload's jobs (a producer's: those it enqueued, with its 20 warm-up jobs) and the warm-up's 1,010.
    jobs=$(node -e 'const w = process.argv[2]; const [cell] = Object.values(require(process.argv[1]).results[w]); const f = cell.values[0];
      console.log(1010 + (f.enqueued !== undefined ? f.enqueued + 20 : f.partial?.of ?? (w.includes("200k") ? 200000 : 20000)))' "$dir/out/peers-latest.json" "$workload")
    echo
    echo "== $system, $workload: $jobs jobs (per job: calls, server µs; top statements by time)"
    psql test -A -F ' | ' -c "
      SELECT round(calls::numeric / $jobs, 4) AS calls_per_job, round((total_exec_time * 1000 / $jobs)::numeric, 2) AS us_per_job,
             round((mean_exec_time * 1000)::numeric, 1) AS us_per_call, rows, left(regexp_replace(query, '\s+', ' ', 'g'), 110) AS statement
      FROM pg_stat_statements WHERE $kept ORDER BY total_exec_time DESC LIMIT 12"
    psql test -A -t -c "SELECT 'all statements: ' || round(sum(calls)::numeric / $jobs, 3) || ' calls and ' || round((sum(total_exec_time) * 1000 / $jobs)::numeric, 1) || ' µs of execution per job' FROM pg_stat_statements WHERE $kept"
  done
done
