#!/usr/bin/env bash
# Push intake: wrk POSTs Live Activity updates by name to a tag audience at `blimp api` on a throwaway PostgreSQL with
# fsync on (its defaults), each answered 202 only once committed. In the same run, wrk measures the framework's own
# ceiling on `GET /health`. Prints both, checks that every 202 is a row in `pushes`, and prints the CPU time the api
# and PostgreSQL spent per accepted push (from /proc, over the POST run).
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
# CPU time, in clock ticks, of the given processes: the api, and PostgreSQL (the postmaster and its processes).
cpu_ticks() {
    local total=0 stat
    for pid in "$@"; do read -r -a stat 2>/dev/null <"/proc/$pid/stat" && total=$((total + stat[13] + stat[14])); done
    echo "$total"
}
postgres_pids() { local postmaster; postmaster=$(head -1 "$work/pg/postmaster.pid"); echo "$postmaster" $(ps --ppid "$postmaster" -o pid=); }
api_pid=${pids[-1]}
before=($(cpu_ticks "$api_pid") $(cpu_ticks $(postgres_pids)) $(psql -At "$DATABASE_URL" -c 'SELECT count(*) FROM pushes'))
wrk -t 1 -c "$connections" -d "${seconds}s" -s bench/push-intake.lua "http://127.0.0.1:$port" | grep -E "Requests/sec|statuses|p50"
after=($(cpu_ticks "$api_pid") $(cpu_ticks $(postgres_pids)) $(psql -At "$DATABASE_URL" -c 'SELECT count(*) FROM pushes'))
echo "pushes in PostgreSQL: ${after[2]}"
awk -v api=$((after[0] - before[0])) -v pg=$((after[1] - before[1])) -v n=$((after[2] - before[2])) -v hz="$(getconf CLK_TCK)" \
    'BEGIN { printf "CPU per accepted push: api %.3f ms, PostgreSQL %.3f ms\n", 1000 * api / hz / n, 1000 * pg / hz / n }'
