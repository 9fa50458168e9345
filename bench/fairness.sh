#!/usr/bin/env bash
# Fairness between apps: app A queues a backlog of BACKLOG new pushes, then app B sends one while a worker (one claim
# loop) works through A's backlog. Prints how long B's push took from its 202 to done, how many of A's pushes were
# claimed before it, and how long the backlog takes, which is what B would wait if claims went oldest first.
# Release build; PostgreSQL with fsync on.
#
#   bench/fairness.sh [BACKLOG=20000]
set -euo pipefail
cd "$(dirname "$0")/.."
backlog=${1:-20000}
source bench/setup.sh
port=$(loopback_ports 1)
start_api "$port"
other=$("$blimp" apps create --name other --bundle-id com.example.other --apns-key-file "$work/key.p8" \
    --apns-key-id $kid --apns-team-id $team --apns-environment sandbox)
other_auth=$(python3 -c "import json,sys; a = json.load(sys.stdin); print(a['app_key'] + ':' + a['master_secret'])" <<<"$other")

# Pushes to names no device tracks: each is claimed, resolves to no token and finishes, so the backlog measures
# claims alone, the part fairness is about.
python3 - "$port" "$(field app_key):$(field master_secret)" "$backlog" <<'PY'
import base64, http.client, json, sys
port, auth, backlog = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
connection = http.client.HTTPConnection("127.0.0.1", port)
headers = {"Authorization": "Basic " + base64.b64encode(auth.encode()).decode(),
           "Accept": "application/vnd.urbanairship+json; version=3", "Content-Type": "application/json"}
for start in range(0, backlog, 100):
    pushes = [{"audience": "all", "device_types": ["ios"],
               "notification": {"ios": {"live_activity": {"event": "update", "name": f"backlog-{i}", "content_state": {"s": i}}}}}
              for i in range(start, min(start + 100, backlog))]
    connection.request("POST", "/api/push", body=json.dumps(pushes), headers=headers)
    answer = connection.getresponse()
    answer.read()
    assert answer.status == 202, answer.status
PY

"$blimp" worker --log-level warning --concurrent-pushes 1 &
pids+=($!)
sleep 2
python3 - "$port" "$other_auth" "$DATABASE_URL" "$backlog" <<'PY'
import base64, http.client, json, subprocess, sys, time
port, auth, database, backlog = int(sys.argv[1]), sys.argv[2], sys.argv[3], int(sys.argv[4])
connection = http.client.HTTPConnection("127.0.0.1", port)
headers = {"Authorization": "Basic " + base64.b64encode(auth.encode()).decode(),
           "Accept": "application/vnd.urbanairship+json; version=3", "Content-Type": "application/json"}
def sql(query):
    return subprocess.run(["psql", "-qtA", database, "-c", query], capture_output=True, text=True, check=True).stdout.strip()
def claimed():
    return int(sql("SELECT count(*) FROM pushes WHERE app_id = 1 AND state <> 'queued'"))
before = claimed()
sent = time.monotonic()
connection.request("POST", "/api/push", headers=headers, body=json.dumps(
    {"audience": "all", "device_types": ["ios"], "notification": {"ios": {"live_activity": {"event": "update", "name": "single", "content_state": {"s": 1}}}}}))
push_id = json.loads(connection.getresponse().read())["push_ids"][0]
while True:
    connection.request("GET", "/api/pushes/" + push_id, headers=headers)
    if json.loads(connection.getresponse().read())["push"]["state"] == "done":
        break
    time.sleep(0.005)
latency = time.monotonic() - sent
ahead = claimed() - before
# The backlog's own pace, for what oldest-first claims would have cost B.
mark, at = claimed(), time.monotonic()
time.sleep(3)
rate = (claimed() - mark) / (time.monotonic() - at)
print(f"| backlog of app A | A's pushes claimed ahead of B's | B: 202 to done | A's claims/s | oldest first, B would wait |")
print(f"|---|---|---|---|---|")
print(f"| {backlog} | {ahead} | {latency * 1000:.0f} ms | {rate:.0f} | {(backlog - before) / rate:.0f} s |")
PY
