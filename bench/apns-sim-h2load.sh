#!/usr/bin/env bash
# Measures `blimp apns-sim` under h2load: Live Activity updates with a valid provider token, over TLS on loopback,
# one connection with 100 streams and four connections with 100 each, logging at its default level. Prints a table.
# Needs: a release build (swift build -c release --product blimp), h2load (Debian nghttp2-client), openssl and
# python3 with the cryptography package. Usage: bench/apns-sim-h2load.sh [requests per run, default 200000]
set -euo pipefail
cd "$(dirname "$0")/.."
requests=${1:-200000}
blimp=.build/release/blimp
[ -x "$blimp" ] || { echo "build first: swift build -c release --product blimp" >&2; exit 1; }
command -v h2load >/dev/null || { echo "install h2load: apt-get install nghttp2-client" >&2; exit 1; }

work=$(mktemp -d)
trap 'kill $sim 2>/dev/null || true; rm -rf "$work"' EXIT
openssl ecparam -genkey -name prime256v1 -noout 2>/dev/null | openssl pkcs8 -topk8 -nocrypt -out "$work/key.p8"
port=$((20000 + RANDOM % 20000))
"$blimp" apns-sim --port "$port" --admin-port $((port + 1)) --state-dir "$work" \
    --trust-key "BENCHKEY01:BENCHTEAM1:$work/key.p8" >/dev/null 2>"$work/apns-sim.log" &
sim=$!
jwt=$(python3 - "$work/key.p8" <<'PY'
import base64, json, sys, time
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, utils
key = serialization.load_pem_private_key(open(sys.argv[1], "rb").read(), password=None)
b64 = lambda b: base64.urlsafe_b64encode(b).rstrip(b"=").decode()
signing_input = b64(json.dumps({"alg": "ES256", "kid": "BENCHKEY01"}).encode()) + "." + \
    b64(json.dumps({"iss": "BENCHTEAM1", "iat": int(time.time())}).encode())
r, s = utils.decode_dss_signature(key.sign(signing_input.encode(), ec.ECDSA(hashes.SHA256())))
print(signing_input + "." + b64(r.to_bytes(32, "big") + s.to_bytes(32, "big")))
PY
)
echo '{"aps":{"timestamp":1700000000,"event":"update","content-state":{"currentHealthLevel":0.941,"eventDescription":"Power Panda found a sword!"}}}' >"$work/payload.json"
for _ in $(seq 50); do (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break; sleep 0.1; done

run() {  # connections, streams per connection
    h2load -n "$requests" -c "$1" -m "$2" -d "$work/payload.json" \
        -H 'apns-push-type: liveactivity' -H 'apns-topic: com.example.bench.push-type.liveactivity' \
        -H "authorization: bearer $jwt" \
        "https://127.0.0.1:$port/3/device/$(printf 'ab%.0s' $(seq 32))" 2>/dev/null |
        awk '/finished in/ {rate=$4} /status codes:/ {ok=$3} END {printf "%s %s\n", rate, ok}'
}
printf '| endpoint | connections | streams each | requests | 2xx | requests/s |\n|---|---|---|---|---|---|\n'
for shape in "1 100" "4 100"; do
    set -- $shape
    read -r rate ok < <(run "$1" "$2")
    printf '| blimp apns-sim (release) | %s | %s | %s | %s | %s |\n' "$1" "$2" "$requests" "$ok" "$rate"
done
