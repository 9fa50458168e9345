#!/usr/bin/env bash
# Blimp's APNs client beside a Go peer, in one run, against the same two endpoints: `blimp apns-sim` and nghttpd (a C
# HTTP/2 server: the fastest endpoint here, so it measures the senders alone; it answers 200 with an empty body from
# an empty file per token). h2load gives each endpoint's own ceiling. The peer is bench/peers/apns-go, built here from
# its source: Go's net/http HTTP/2 client, the transport Go's APNs libraries (gorush's among them) are built on. Same
# payload (the WWDC23 update), priority 10, a new 64-hex token per request, over TLS on loopback. Prints a table.
#
# Needs: release builds (swift build -c release --product blimp && swift build -c release --product
# apns-client-bench), Go (apt-get install golang-go), h2load and nghttpd (Debian nghttp2-client, nghttp2-server),
# openssl, and python3 with cryptography (h2load's provider token).
# Usage: bench/apns-client.sh [requests per run, default 100000]
set -euo pipefail
cd "$(dirname "$0")/.."
requests=${1:-100000}
blimp=.build/release/blimp
bench=.build/release/apns-client-bench
for tool in "$blimp" "$bench"; do
    [ -x "$tool" ] || { echo "build first: swift build -c release --product $(basename "$tool")" >&2; exit 1; }
done
for tool in go h2load nghttpd openssl; do
    command -v "$tool" >/dev/null || { echo "missing $tool (see the header of $0)" >&2; exit 1; }
done

work=$(mktemp -d)
pids=()
trap 'kill "${pids[@]}" 2>/dev/null || true; rm -rf "$work"' EXIT
(cd bench/peers/apns-go && go build -o "$work/apns-go" .)
openssl ecparam -genkey -name prime256v1 -noout 2>/dev/null | openssl pkcs8 -topk8 -nocrypt -out "$work/key.p8"
kid=BENCHKEY01 team=BENCHTEAM1 topic=com.example.bench.push-type.liveactivity

wait_for_port() { for _ in $(seq 100); do (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return; sleep 0.1; done; }
sim_port=$((20000 + RANDOM % 20000)) nghttpd_port=$((sim_port + 2))
"$blimp" apns-sim --port "$sim_port" --admin-port $((sim_port + 1)) --state-dir "$work" \
    --trust-key "$kid:$team:$work/key.p8" >/dev/null 2>"$work/apns-sim.log" &
pids+=($!)
wait_for_port "$sim_port"
mkdir -p "$work/docroot/3/device"
python3 -c 'import sys; [open("%s/%064x" % (sys.argv[1], i), "w").close() for i in range(1, int(sys.argv[2]) + 2)]' \
    "$work/docroot/3/device" "$requests"
nghttpd -d "$work/docroot" -m 1000 -n 1 "$nghttpd_port" "$work/server-key.pem" "$work/server.pem" >/dev/null 2>&1 &
pids+=($!)
wait_for_port "$nghttpd_port"

jwt=$(python3 - "$work/key.p8" "$kid" "$team" <<'PY'
import base64, json, sys, time
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, utils
key = serialization.load_pem_private_key(open(sys.argv[1], "rb").read(), password=None)
b64 = lambda b: base64.urlsafe_b64encode(b).rstrip(b"=").decode()
signing_input = b64(json.dumps({"alg": "ES256", "kid": sys.argv[2]}).encode()) + "." + \
    b64(json.dumps({"iss": sys.argv[3], "iat": int(time.time())}).encode())
r, s = utils.decode_dss_signature(key.sign(signing_input.encode(), ec.ECDSA(hashes.SHA256())))
print(signing_input + "." + b64(r.to_bytes(32, "big") + s.to_bytes(32, "big")))
PY
)
echo '{"aps":{"timestamp":1685952000,"event":"update","content-state":{"currentHealthLevel":0.941,"eventDescription":"Power Panda found a sword!"}}}' \
    >"$work/payload.json"

# Each sender prints "<ok> <requests/s>".
h2load_run() {  # url connections in-flight
    h2load -n "$requests" -c "$2" -m $(($3 / $2)) -d "$work/payload.json" -H 'apns-push-type: liveactivity' \
        -H "apns-topic: $topic" -H 'apns-priority: 10' -H "authorization: bearer $jwt" \
        "$1/3/device/$(printf '0%.0s' $(seq 63))1" 2>/dev/null |
        awk '/finished in/ {rate=$4} /status codes:/ {ok=$3} END {printf "%s %s\n", ok, rate}'
}
blimp_run() {
    "$bench" --url "$1" --ca "$work/ca.pem" --p8 "$work/key.p8" --kid $kid --team $team --topic $topic \
        -n "$requests" -c "$2" -m "$3" | awk '{print $4, $(NF-1)}'
}
go_run() {
    "$work/apns-go" -url "$1" -ca "$work/ca.pem" -p8 "$work/key.p8" -kid $kid -team $team -topic $topic \
        -n "$requests" -c "$2" -m "$3" | awk '{print $4, $(NF-1)}'
}

printf '| endpoint | sender | connections | in flight | requests | 200 | requests/s | Blimp ÷ sender |\n'
printf '|---|---|---|---|---|---|---|---|\n'
for endpoint in "apns-sim https://127.0.0.1:$sim_port" "nghttpd https://127.0.0.1:$nghttpd_port"; do
    set -- $endpoint
    name=$1 url=$2
    for connections in 1 4; do
        read -r blimp_ok blimp_rate < <(blimp_run "$url" "$connections" 1000)
        for sender in h2load blimp go; do
            if [ "$sender" = blimp ]; then ok=$blimp_ok rate=$blimp_rate; else read -r ok rate < <("${sender}_run" "$url" "$connections" 1000); fi
            ratio=$(awk -v a="$blimp_rate" -v b="$rate" 'BEGIN { printf "%.2f", a / b }')
            label=$sender; [ "$sender" = go ] && label="apns-go (net/http)"; [ "$sender" = blimp ] && label="blimp (BlimpAPNs)"
            printf '| %s | %s | %s | 1000 | %s | %s | %.0f | %s |\n' "$name" "$label" "$connections" "$requests" "$ok" "$rate" "$ratio"
        done
    done
done
