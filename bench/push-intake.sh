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
source scripts/postgres.sh

seconds=${1:-15}
connections=${2:-64}
blimp=${BLIMP:-.build/release/blimp}
[ -x "$blimp" ] || swift build -c release --product blimp
command -v wrk >/dev/null || { apt-get install -y wrk >/dev/null 2>&1 || { apt-get update >/dev/null && apt-get install -y wrk >/dev/null; }; }

work=$(mktemp -d /tmp/blimp-push-intake-XXXXXX)
chmod 755 "$work"
api_pid=
cleanup() {
    [ -n "$api_pid" ] && kill "$api_pid" 2>/dev/null && wait "$api_pid" 2>/dev/null || true
    stop_cluster "$work/pg"
    rm -rf "$work"
}
trap cleanup EXIT

start_cluster "$work/pg" "-c max_connections=200"
export BLIMP_SECRET_KEY=$(openssl rand -base64 32)
"$blimp" migrate >/dev/null
openssl ecparam -name prime256v1 -genkey -noout 2>/dev/null | openssl pkcs8 -topk8 -nocrypt -out "$work/key.p8"
app=$("$blimp" apps create --name bench --bundle-id com.example.bench --apns-key-file "$work/key.p8" \
    --apns-key-id BENCHKEY01 --apns-team-id BENCHTEAM1 --apns-environment sandbox)
field() { python3 -c "import json,sys; print(json.load(sys.stdin)['$1'])" <<<"$app"; }

port=$(free_port)
"$blimp" api --port "$port" --log-level warning &
api_pid=$!
for _ in $(seq 100); do curl -sf "http://127.0.0.1:$port/ready" >/dev/null && break; sleep 0.1; done

echo "$connections connections, $seconds s each; PostgreSQL $("$(postgres_bindir)/postgres" --version | awk '{print $3}') with fsync on; $(nproc) cores"
echo "== GET /health (the framework's ceiling)"
wrk -t 1 -c "$connections" -d "${seconds}s" --latency "http://127.0.0.1:$port/health" | grep -E "Requests/sec|^ +(50|99)%"
echo "== POST /api/push (update by name to a tag audience)"
export BENCH_AUTHORIZATION="Basic $(printf '%s:%s' "$(field app_key)" "$(field master_secret)" | base64 -w0)"
wrk -t 1 -c "$connections" -d "${seconds}s" -s bench/push-intake.lua "http://127.0.0.1:$port" | grep -E "Requests/sec|statuses|p50"
echo "pushes in PostgreSQL: $(psql -At "$DATABASE_URL" -c 'SELECT count(*) FROM pushes')"
