#!/usr/bin/env bash
# Push intake: wrk POSTs Live Activity updates by name to a tag audience at `blimp api` on a throwaway PostgreSQL with
# fsync on (its defaults), each answered 202 only once committed. In the same run, wrk measures the framework's own
# ceiling on `GET /health`. Prints both, and checks that every 202 is a row in `pushes`.
#
#   bench/push-intake.sh [seconds] [connections]
#
# Uses the release build (swift build -c release --product blimp; BLIMP=path overrides). Installs wrk when missing.
# Results go in docs/performance.md.
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=${1:-15}
connections=${2:-64}
command -v wrk >/dev/null || { apt-get install -y wrk >/dev/null 2>&1 || { apt-get update >/dev/null && apt-get install -y wrk >/dev/null; }; }
source bench/setup.sh
port=$(free_port)
start_api "$port"

echo "$connections connections, $seconds s each; $postgres_line"
echo "== GET /health (the framework's ceiling)"
wrk -t 1 -c "$connections" -d "${seconds}s" --latency "http://127.0.0.1:$port/health" | grep -E "Requests/sec|^ +(50|99)%"
echo "== POST /api/push (update by name to a tag audience)"
export BENCH_AUTHORIZATION="Basic $(printf '%s:%s' "$(field app_key)" "$(field master_secret)" | base64 -w0)"
wrk -t 1 -c "$connections" -d "${seconds}s" -s bench/push-intake.lua "http://127.0.0.1:$port" | grep -E "Requests/sec|statuses|p50"
echo "pushes in PostgreSQL: $(psql -At "$DATABASE_URL" -c 'SELECT count(*) FROM pushes')"
