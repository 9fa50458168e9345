#!/usr/bin/env bash
# Registration intake: simulated devices (`blimp simulate-devices`) each create a channel, fetch their channel token
# and report one Live Activity token, against `blimp api` on a throwaway PostgreSQL with fsync on (its defaults), while
# the server API looks channels up at a steady rate. Prints the simulator's table.
#
#   bench/registration.sh [devices] [concurrency] [lookups per second] [devices per second] [simulate-devices flags…]
#
# Without a rate, devices register as fast as the API answers (the intake ceiling); with one, they start at that
# pace, which is how lookup latency is measured under a given load.
# Uses the release build (swift build -c release --product blimp; BLIMP=path overrides). Results go in
# docs/performance.md.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/postgres.sh

devices=${1:-50000}
concurrency=${2:-64}
lookup_rate=${3:-200}
rate=${4:-}
shift $(( $# < 4 ? $# : 4 ))
blimp=${BLIMP:-.build/release/blimp}
[ -x "$blimp" ] || swift build -c release --product blimp

work=$(mktemp -d /tmp/blimp-registration-XXXXXX)
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

echo "$devices devices, $concurrency at once${rate:+, $rate started/s}, $lookup_rate lookups/s${*:+, $*}; PostgreSQL $("$(postgres_bindir)/postgres" --version | awk '{print $3}') with fsync on; $(nproc) cores"
BLIMP_APP_SECRET=$(field app_secret) BLIMP_MASTER_SECRET=$(field master_secret) \
    "$blimp" simulate-devices --url "http://127.0.0.1:$port" --app-key "$(field app_key)" \
    --count "$devices" --concurrency "$concurrency" --lookup-rate "$lookup_rate" ${rate:+--rate "$rate"} "$@"
