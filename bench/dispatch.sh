#!/usr/bin/env bash
# Dispatch, end to end: `blimp api` → PostgreSQL (fsync on) → `blimp worker` → `blimp apns-sim`, all on this machine,
# release builds. Three measurements in one run, printed as tables:
#   1. fan-out: one update by name to N activities (plus M activities of another name, which must get nothing),
#      tokens per second from the 202 to the last acknowledgement; beside it, bench/peers/apns-go (Go's net/http
#      HTTP/2 client, built here from its source) sending N pre-built requests to the same simulator;
#   2. memory: the worker's peak RSS during a fan-out to BIG tokens (0 skips it);
#   3. latency: K single-token updates one after another, from the API's 202 to the simulator's arrival time.
# Tokens are seeded with SQL (registration has its own benchmark). Needs Go (apt-get install golang-go).
#
#   bench/dispatch.sh [N=100000] [M=10000] [BIG=1000000] [K=1000]
#
# WORKER_ARGS adds flags to the worker, e.g. WORKER_ARGS="--metrics-port 0" to measure with metrics recorded; SIM_ARGS
# to the simulator, e.g. SIM_ARGS="--environment production" for answers without apns-unique-id. SEND_EVENTS=off
# measures without a SEND event per token (blimp apps send-events). SLOW_WEBHOOK=on gives the app a webhook endpoint for
# every event type that answers each delivery after 10 s (on loopback, so BLIMP_WEBHOOKS_ALLOW_PRIVATE is set).
set -euo pipefail
cd "$(dirname "$0")/.."
tokens=${1:-100000}
others=${2:-10000}
big=${3:-1000000}
singles=${4:-1000}
command -v go >/dev/null || { apt-get install -y golang-go >/dev/null 2>&1 || { apt-get update >/dev/null && apt-get install -y golang-go >/dev/null; }; }
source bench/setup.sh
auth="$(field app_key):$(field master_secret)"
"$blimp" apps send-events --app-key "$(field app_key)" "${SEND_EVENTS:-on}" >/dev/null

read -r sim_port admin_port api_port hook_port < <(loopback_ports 4)
# shellcheck disable=SC2086 # SIM_ARGS is a list of flags
start_simulator "$sim_port" "$admin_port" ${SIM_ARGS:-}
if [ "${SLOW_WEBHOOK:-off}" = on ]; then
    export BLIMP_WEBHOOKS_ALLOW_PRIVATE=1
    python3 - "$hook_port" <<'PY' &
import sys, time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
class Slow(BaseHTTPRequestHandler):
    def do_POST(self):
        self.rfile.read(int(self.headers["Content-Length"]))
        time.sleep(10)
        self.send_response(204)
        self.end_headers()
    def log_message(self, *args):
        pass
ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Slow).serve_forever()
PY
    pids+=($!)
fi
start_api "$api_port"
if [ "${SLOW_WEBHOOK:-off}" = on ]; then
    curl -sf -u "$auth" -H 'Accept: application/vnd.urbanairship+json; version=3' "http://127.0.0.1:$api_port/api/webhooks" \
        -d '{"url": "http://127.0.0.1:'"$hook_port"'/hooks"}' >/dev/null
fi
# shellcheck disable=SC2086 # WORKER_ARGS is a list of flags
start_worker "$sim_port" ${WORKER_ARGS:-}
worker=${pids[-1]}
(cd bench/peers/apns-go && go build -o "$work/apns-go" .)

# seed NAME COUNT: COUNT channels, each tracking one active activity named NAME.
seed() {
    psql -q "$DATABASE_URL" <<SQL
INSERT INTO channels (app_id, channel_id, opt_in)
    SELECT 1, md5('$1/' || i)::uuid, true FROM generate_series(1, $2) i;
INSERT INTO live_activities (app_id, channel_id, name, activity_id, token, state, started_at, action_ts_ms)
    SELECT 1, md5('$1/' || i)::uuid, '$1', 'a' || i, md5('t/$1/' || i) || md5('u/$1/' || i), 'active', now(), 1
    FROM generate_series(1, $2) i;
SQL
}
# push NAME: queues an update by name to every channel; prints the push id.
push() {
    curl -s -u "$auth" -H 'Accept: application/vnd.urbanairship+json; version=3' "http://127.0.0.1:$api_port/api/push" \
        -d '{"audience":"all","device_types":["ios"],"notification":{"ios":{"live_activity":{"event":"update","name":"'"$1"'","priority":5,"content_state":{"currentHealthLevel":0.941,"eventDescription":"Power Panda found a sword!"}}}}}' |
        python3 -c 'import json,sys; print(json.load(sys.stdin)["push_ids"][0])'
}
# wait_done ID: waits until the push is done (one process polling every 20 ms on one connection); prints its counts.
wait_done() {
    python3 - "$api_port" "$auth" "$1" <<'PY'
import base64, http.client, json, sys, time
connection = http.client.HTTPConnection("127.0.0.1", int(sys.argv[1]))
headers = {"Authorization": "Basic " + base64.b64encode(sys.argv[2].encode()).decode(),
           "Accept": "application/vnd.urbanairship+json; version=3"}
while True:
    connection.request("GET", "/api/pushes/" + sys.argv[3], headers=headers)
    push = json.loads(connection.getresponse().read())["push"]
    if push["state"] == "done":
        print(json.dumps(push["counts"]))
        break
    time.sleep(0.02)
PY
}
accepted() { curl -s "http://127.0.0.1:$admin_port/counters" | python3 -c 'import json,sys; print(json.load(sys.stdin)["accepted"])'; }

echo "$postgres_line"
echo
echo "== 1. fan-out: $tokens activities named match-1, $others named match-2"
seed match-1 "$tokens"; seed match-2 "$others"
psql -q "$DATABASE_URL" -c "VACUUM ANALYZE"
start=$(date +%s.%N)
id=$(push match-1)
counts=$(wait_done "$id")
end=$(date +%s.%N)
received=$(accepted)
blimp_rate=$(python3 -c "print(round($tokens / ($end - $start)))")
read -r go_ok go_rate < <("$work/apns-go" -url "https://127.0.0.1:$sim_port" -ca "$work/sim/ca.pem" -p8 "$work/key.p8" \
    -kid $kid -team $team -topic com.example.bench.push-type.liveactivity -n "$tokens" -c 1 -m 1000 | awk '{print $4, $(NF-1)}')
printf '| sender | tokens | accepted by the simulator | seconds | tokens/s | Blimp ÷ apns-go |\n|---|---|---|---|---|---|\n'
printf '| blimp api → worker (202 to last ack) | %s | %s | %.2f | %s | %.2f |\n' "$tokens" "$received" \
    "$(python3 -c "print($end - $start)")" "$blimp_rate" "$(python3 -c "print($blimp_rate / $go_rate)")"
printf '| apns-go (pre-built requests) | %s | %s | %.2f | %.0f | |\n' "$tokens" "$go_ok" \
    "$(python3 -c "print($tokens / $go_rate)")" "$go_rate"
echo "counts: $counts"

if [ "$big" -gt 0 ]; then
    echo
    echo "== 2. memory: a fan-out to $big tokens"
    seed big "$big"
    psql -q "$DATABASE_URL" -c "VACUUM ANALYZE"
    before=$(awk '/VmHWM/ {print $2}' "/proc/$worker/status")
    start=$(date +%s.%N)
    id=$(push big)
    counts=$(wait_done "$id")
    end=$(date +%s.%N)
    peak=$(awk '/VmHWM/ {print $2}' "/proc/$worker/status")
    printf '| tokens | seconds | tokens/s | worker peak RSS before | worker peak RSS after |\n|---|---|---|---|---|\n'
    printf '| %s | %.1f | %.0f | %s MB | %s MB |\n' "$big" "$(python3 -c "print($end - $start)")" \
        "$(python3 -c "print($big / ($end - $start))")" $((before / 1024)) $((peak / 1024))
    echo "counts: $counts"
fi

[ "$singles" -gt 0 ] || exit 0
echo
echo "== 3. latency: $singles single-token updates, from the 202 to the simulator"
seed solo 1
python3 - "$api_port" "$admin_port" "$auth" "$singles" <<'PY'
import base64, datetime, hashlib, http.client, json, sys, time
api_port, admin_port, auth, count = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
token = hashlib.md5(b"t/solo/1").hexdigest() + hashlib.md5(b"u/solo/1").hexdigest()
api = http.client.HTTPConnection("127.0.0.1", api_port)
admin = http.client.HTTPConnection("127.0.0.1", admin_port)
headers = {"Authorization": "Basic " + base64.b64encode(auth.encode()).decode(),
           "Accept": "application/vnd.urbanairship+json; version=3", "Content-Type": "application/json"}
latencies = []
for i in range(count):
    body = json.dumps({"audience": "all", "device_types": ["ios"], "notification": {"ios": {"live_activity": {
        "event": "update", "name": "solo", "priority": 5, "content_state": {"i": i}}}}})
    api.request("POST", "/api/push", body, headers)
    response = api.getresponse(); response.read()
    accepted = time.time()
    assert response.status == 202, response.status
    while True:
        admin.request("GET", "/devices/" + token)
        device = json.loads(admin.getresponse().read())
        deliveries = device.get("deliveries", [])
        mine = [d for d in deliveries if '"i":%d}' % i in d["payload"]]
        if mine:
            arrived = datetime.datetime.fromisoformat(mine[-1]["arrived_at"]).timestamp()
            latencies.append(max(0.0, arrived - accepted) * 1000)
            break
        time.sleep(0.0005)
latencies.sort()
pick = lambda q: latencies[min(len(latencies) - 1, int(len(latencies) * q))]
print("| pushes | p50 ms | p90 ms | p99 ms | max ms |\n|---|---|---|---|---|")
print("| %d | %.1f | %.1f | %.1f | %.1f |" % (count, pick(0.5), pick(0.9), pick(0.99), latencies[-1]))
PY
