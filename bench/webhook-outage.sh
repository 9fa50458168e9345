#!/usr/bin/env bash
# A webhook endpoint that is down, then comes back: `blimp api` and `blimp worker` (to `blimp apns-sim`), the product's
# retry schedule, and an endpoint for every event type on a loopback port nothing listens on. A push to DEVICES
# activities happens while it is down (its PUSH_BODY, a SEND per device and its PUSH_FINISHED). After DOWN seconds a
# receiver comes up that verifies every delivery with the `standardwebhooks` library (PyPI); prints the worker's failed
# attempts while it was down, and how long after its return the first and the last of the events arrived.
#
#   bench/webhook-outage.sh [down seconds] [devices]
#
# Uses the release build (swift build -c release --product blimp; BLIMP=path overrides). Results go in
# docs/performance.md.
set -euo pipefail
cd "$(dirname "$0")/.."
down=${1:-300}
devices=${2:-1000}
source bench/setup.sh
auth="$(field app_key):$(field master_secret)"
export BLIMP_WEBHOOKS_ALLOW_PRIVATE=1
read -r sim_port admin_port api_port hook_port < <(loopback_ports 4)
start_simulator "$sim_port" "$admin_port"
start_api "$api_port"
start_worker "$sim_port"
api() { curl -sf -u "$auth" -H 'Accept: application/vnd.urbanairship+json; version=3' "http://127.0.0.1:$api_port$1" "${@:2}"; }
secret=$(api /api/webhooks -d '{"url": "http://127.0.0.1:'"$hook_port"'/hooks"}' |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["webhook"]["secret"])')

psql -q "$DATABASE_URL" <<SQL
INSERT INTO channels (app_id, channel_id, opt_in) SELECT 1, md5('outage/' || i)::uuid, true FROM generate_series(1, $devices) i;
INSERT INTO live_activities (app_id, channel_id, name, activity_id, token, state, started_at, action_ts_ms)
    SELECT 1, md5('outage/' || i)::uuid, 'outage', 'a' || i, md5('t/' || i) || md5('u/' || i), 'active', now(), 1
    FROM generate_series(1, $devices) i;
SQL
echo "$postgres_line; endpoint down ${down} s, a push to $devices devices meanwhile ($((devices + 2)) events)"
api /api/push -d '{"audience":"all","device_types":["ios"],"notification":{"ios":{"live_activity":{"event":"update","name":"outage","content_state":{"score":1}}}}}' >/dev/null
sleep "$down"
failed=$(api /api/webhooks | python3 -c 'import json,sys; print(json.load(sys.stdin)["webhooks"][0]["failed_attempts"])')

python3 - "$hook_port" "$secret" "$((devices + 2))" <<'PY'
import signal, sys, time
from http.server import BaseHTTPRequestHandler, HTTPServer
from standardwebhooks.webhooks import Webhook

signal.alarm(900)  # a sender that never comes ends the bench
port, webhook, expect = int(sys.argv[1]), Webhook(sys.argv[2]), int(sys.argv[3])
back, first, seen = time.monotonic(), None, set()

class Receiver(BaseHTTPRequestHandler):
    def do_POST(self):
        global first
        body = self.rfile.read(int(self.headers["Content-Length"]))
        payload = webhook.verify(body, {name.lower(): value for name, value in self.headers.items()})
        self.send_response(204)
        self.end_headers()
        first = first or time.monotonic()
        seen.update(event["id"] for event in payload["data"])
        if len(seen) >= expect:
            print(f"first delivery {first - back:.1f} s after the endpoint came back; all {len(seen)} events after {time.monotonic() - back:.1f} s")
            sys.exit(0)

    def log_message(self, *args):
        pass

server = HTTPServer(("127.0.0.1", port), Receiver)
server.timeout = 600
try:
    while True:
        server.handle_request()
except SystemExit:
    pass
PY
echo "failed attempts while down: $failed"
