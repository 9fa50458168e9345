#!/usr/bin/env bash
# Broadcast against per-token fan-out, end to end: `blimp api` → PostgreSQL (fsync on) → `blimp worker` →
# `blimp apns-sim`, all on this machine, release builds. N simulated devices subscribe to a live activity channel (the
# API creates it at the simulator's channel management; a start to N push-to-start tokens carries
# `input-push-channel`), then one update of the channel-backed name is published once, against the same update by
# name to N update tokens of another name (no channel: one request per token). For each: the time from the API's 202
# to the last simulated device receiving it (the newest `arrived_at` over all N devices, read from the admin endpoint
# afterwards), and the APNs requests it took (the report's per-token sends plus the publishes the simulator counted).
# The simulator applies a publish to every subscriber while answering it (Apple fans it out on its side). It remembers
# at most 10,000 tokens besides those subscribed to a channel, forgetting the oldest first, so the per-token path's
# devices are counted from its accepted counter and its last arrival read from the tokens it still remembers (the
# newest). Printed as a table.
#
#   bench/broadcast.sh [N=100000]
set -euo pipefail
cd "$(dirname "$0")/.."
devices=${1:-100000}
source bench/setup.sh
auth="$(field app_key):$(field master_secret)"

read -r sim_port admin_port api_port < <(loopback_ports 3)
start_simulator "$sim_port" "$admin_port"
# The API manages live activity channels at the simulator (BLIMP_APNS_CHANNELS_URL defaults to BLIMP_APNS_URL).
BLIMP_APNS_URL="https://127.0.0.1:$sim_port" BLIMP_APNS_CA_FILE="$work/sim/ca.pem" start_api "$api_port"
start_worker "$sim_port"

# N channels, each with a push-to-start token of MatchAttributes (to subscribe) and an update token of "tokens" (the
# per-token path), the tokens distinct.
psql -q "$DATABASE_URL" <<SQL
INSERT INTO channels (app_id, channel_id, opt_in) SELECT 1, md5('d/' || i)::uuid, true FROM generate_series(1, $devices) i;
INSERT INTO push_to_start_tokens (app_id, channel_id, attributes_type, token, action_ts_ms)
    SELECT 1, md5('d/' || i)::uuid, 'MatchAttributes', md5('s/' || i) || md5('start/' || i), 1 FROM generate_series(1, $devices) i;
INSERT INTO live_activities (app_id, channel_id, name, activity_id, token, state, started_at, action_ts_ms)
    SELECT 1, md5('d/' || i)::uuid, 'tokens', 'a' || i, md5('t/' || i) || md5('u/' || i), 'active', now(), 1
    FROM generate_series(1, $devices) i;
VACUUM ANALYZE;
SQL

# The driver: creates the channel, subscribes the devices, then times both paths.
python3 - "$api_port" "$admin_port" "$auth" "$devices" "$DATABASE_URL" <<'PY'
import base64, datetime, hashlib, http.client, json, subprocess, sys, time
api_port, admin_port, auth, devices, database = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], int(sys.argv[4]), sys.argv[5]
api = http.client.HTTPConnection("127.0.0.1", api_port)
admin = http.client.HTTPConnection("127.0.0.1", admin_port)
headers = {"Authorization": "Basic " + base64.b64encode(auth.encode()).decode(),
           "Accept": "application/vnd.urbanairship+json; version=3", "Content-Type": "application/json"}

def call(method, path, body=None):
    api.request(method, path, json.dumps(body) if body is not None else None, headers)
    response = api.getresponse()
    return response.status, json.loads(response.read() or b"{}")

def counters():
    admin.request("GET", "/counters")
    return json.loads(admin.getresponse().read())

def push(event, name, state):
    activity = {"event": event, "name": name, "priority": 5, "content_state": state}
    if event == "start":
        activity.update({"attributes_type": "MatchAttributes", "attributes": {"match": "final"}, "alert": {"title": "Kick-off"}})
    status, body = call("POST", "/api/push", {"audience": "all", "device_types": ["ios"], "notification": {"ios": {"live_activity": activity}}})
    assert status == 202, (status, body)
    return time.time(), body["push_ids"][0]

def wait_done(push_id):
    while True:
        status, body = call("GET", "/api/pushes/" + push_id)
        if body["push"]["state"] not in ("queued", "sending"):
            return body["push"]
        time.sleep(0.02)

def last_arrival(tokens, marker):
    """The newest arrival of the delivery whose payload carries `marker`, over every token; how many had it."""
    newest, reached = 0.0, 0
    for token in tokens:
        admin.request("GET", "/devices/" + token)
        device = json.loads(admin.getresponse().read())
        mine = [d for d in device.get("deliveries", []) if marker in d["payload"]]
        if mine:
            reached += 1
            newest = max(newest, datetime.datetime.fromisoformat(mine[-1]["arrived_at"]).timestamp())
    return newest, reached

def md5(text): return hashlib.md5(text.encode()).hexdigest()
start_tokens = [md5("s/%d" % i) + md5("start/%d" % i) for i in range(1, devices + 1)]
update_tokens = [md5("t/%d" % i) + md5("u/%d" % i) for i in range(1, devices + 1)]

status, body = call("POST", "/api/live_activity_channels", {"name": "final", "message_storage_policy": 0})
assert status == 201, (status, body)
began = time.time()
_, start_id = push("start", "final", {"home": 0})
report = wait_done(start_id)
print("subscribed %d devices with one start (input-push-channel) in %.1f s: %s" % (devices, time.time() - began, json.dumps(report["counts"])))

rows = []
for label, name, tokens in (("one broadcast publish (live activity channel)", "final", start_tokens),
                            ("update by name to N tokens", "tokens", update_tokens)):
    before = counters()
    marker = '"bench":"%s"' % name
    accepted, push_id = push("update", name, {"bench": name})
    report = wait_done(push_id)
    finished = time.time()
    after = counters()
    newest, reached = last_arrival(tokens, marker)
    # Requests: the worker's per-token sends (the report's counts) and the publishes the simulator counted.
    counts = report["counts"]
    requests = counts["sent"] + sum(counts["failed"].values()) + after["broadcasts"] - before["broadcasts"]
    reached = max(reached, after["accepted"] - before["accepted"])
    rows.append((label, reached, requests, newest - accepted, finished - accepted, report))

print("| path | devices that got it | APNs requests | 202 → last device (s) | 202 → push done (s) |")
print("|---|---|---|---|---|")
for label, reached, requests, last, done, _ in rows:
    print("| %s | %d | %d | %.2f | %.2f |" % (label, reached, requests, last, done))
for label, _, _, _, _, report in rows:
    print("%s: %s %s" % (label, json.dumps(report["counts"]), json.dumps(report.get("live_activity_channel"))))
PY
