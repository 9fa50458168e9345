#!/usr/bin/env bash
# Registration intake: simulated devices (`blimp simulate-devices`) each create a channel, fetch their channel token
# and report one Live Activity token, against `blimp api` on a throwaway PostgreSQL with fsync on (its defaults), while
# the server API looks channels up at a steady rate. Prints the simulator's table.
#
#   bench/registration.sh [devices] [concurrency] [lookups per second] [devices per second] [simulate-devices flags…]
#
# The defaults are 50,000 devices, 256 at once (the figures in docs/performance.md use 256), 200 lookups a second,
# no pacing.
# Without a rate, devices register as fast as the API answers (the intake ceiling); with one, they start at that
# pace, which is how lookup latency is measured under a given load.
# Uses the release build (swift build -c release --product blimp; BLIMP=path overrides). Results go in
# docs/performance.md.
set -euo pipefail
cd "$(dirname "$0")/.."

devices=${1:-50000}
concurrency=${2:-256}
lookup_rate=${3:-200}
rate=${4:-}
shift $(( $# < 4 ? $# : 4 ))
source bench/setup.sh
port=$(free_port)
start_api "$port"

echo "$devices devices, $concurrency at once${rate:+, $rate started/s}, $lookup_rate lookups/s${*:+, $*}; $postgres_line"
BLIMP_APP_SECRET=$(field app_secret) BLIMP_MASTER_SECRET=$(field master_secret) \
    "$blimp" simulate-devices --url "http://127.0.0.1:$port" --app-key "$(field app_key)" \
    --count "$devices" --concurrency "$concurrency" --lookup-rate "$lookup_rate" ${rate:+--rate "$rate"} "$@"
