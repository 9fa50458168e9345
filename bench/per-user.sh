#!/usr/bin/env bash
# Per-user pushes of a shared name, as a backend sends them: N users each track an activity named `delivery`, and each
# gets one update to its own channel (`{"ios_channel": …}`), every other one with the caller's `timestamp` (the same
# for all). `blimp api` → PostgreSQL (fsync on) → `blimp worker` × W → `blimp apns-sim`, release builds. Two phases,
# measured apart (two cores cannot run intake and drain at full speed at once), printed as tables:
#   1. intake: the N updates posted through the API from C connections, the workers stopped;
#   2. drain: W workers started on the queue, until every push is finished.
# Then what became of them: answers by status, pushes by state, tokens sent once, twice or never, superseded.
#
#   bench/per-user.sh [N=5000] [C=32] [W=2]
set -euo pipefail
cd "$(dirname "$0")/.."
users=${1:-5000}
connections=${2:-32}
workers=${3:-2}
source bench/setup.sh
auth="$(field app_key):$(field master_secret)"
read -r sim_port admin_port api_port < <(loopback_ports 3)
start_simulator "$sim_port" "$admin_port"
start_api "$api_port"
psql -q "$DATABASE_URL" <<SQL
INSERT INTO channels (app_id, channel_id, opt_in) SELECT 1, md5('user/' || i)::uuid, true FROM generate_series(1, $users) i;
INSERT INTO live_activities (app_id, channel_id, name, activity_id, token, state, started_at, action_ts_ms)
    SELECT 1, md5('user/' || i)::uuid, 'delivery', 'a' || i, md5('t/' || i) || md5('u/' || i), 'active', now(), 1
    FROM generate_series(1, $users) i;
VACUUM ANALYZE;
SQL

echo "$postgres_line; $users users, $connections connections, $workers workers"
echo
echo "== 1. intake: one update per user through POST /api/push, workers stopped"
python3 - "$api_port" "$auth" "$users" "$connections" <<'PY'
import base64, collections, hashlib, http.client, json, sys, threading, time, uuid
port, auth, users, connections = int(sys.argv[1]), sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
headers = {"Authorization": "Basic " + base64.b64encode(auth.encode()).decode(),
           "Accept": "application/vnd.urbanairship+json; version=3", "Content-Type": "application/json"}
stamp = int(time.time())
statuses, latencies, lock = collections.Counter(), [], threading.Lock()
def post(lane):
    connection = http.client.HTTPConnection("127.0.0.1", port)
    for i in range(lane + 1, users + 1, connections):
        channel = str(uuid.UUID(hashlib.md5(b"user/%d" % i).hexdigest()))
        activity = {"event": "update", "name": "delivery", "priority": 5, "content_state": {"user": i}}
        if i % 2 == 0: activity["timestamp"] = stamp
        body = json.dumps({"audience": {"ios_channel": channel}, "device_types": ["ios"],
                           "notification": {"ios": {"live_activity": activity}}})
        began = time.monotonic()
        connection.request("POST", "/api/push", body, headers)
        response = connection.getresponse(); response.read()
        with lock:
            statuses[response.status] += 1
            latencies.append((time.monotonic() - began) * 1000)
began = time.monotonic()
threads = [threading.Thread(target=post, args=(lane,)) for lane in range(connections)]
for thread in threads: thread.start()
for thread in threads: thread.join()
seconds = time.monotonic() - began
latencies.sort()
pick = lambda q: latencies[min(len(latencies) - 1, int(len(latencies) * q))]
print("| pushes | seconds | pushes/s | p50 ms | p99 ms | answers |\n|---|---|---|---|---|---|")
print("| %d | %.2f | %.0f | %.1f | %.1f | %s |" % (users, seconds, users / seconds, pick(0.5), pick(0.99),
      ", ".join("%d × %d" % (count, status) for status, count in sorted(statuses.items()))))
PY

echo
echo "== 2. drain: $workers workers on the queue"
queued=$(psql -At "$DATABASE_URL" -c "SELECT count(*) FROM pushes WHERE state = 'queued'")
start=$(date +%s.%N)
for _ in $(seq "$workers"); do start_worker "$sim_port"; done
while [ "$(psql -At "$DATABASE_URL" -c "SELECT count(*) FROM pushes WHERE state IN ('queued', 'sending')")" != 0 ]; do sleep 0.05; done
end=$(date +%s.%N)
printf '| pushes queued | seconds | pushes/s |\n|---|---|---|\n| %s | %.2f | %.0f |\n' "$queued" \
    "$(python3 -c "print($end - $start)")" "$(python3 -c "print($queued / ($end - $start))")"

echo
echo "== what became of them"
psql -q "$DATABASE_URL" <<SQL
\pset footer off
SELECT state, count(*) AS pushes, sum((counts->>'sent')::int) AS sent, sum((counts->>'superseded')::int) AS superseded
FROM pushes GROUP BY state ORDER BY state;
SELECT count(*) FILTER (WHERE sends = 1) AS "tokens sent once", count(*) FILTER (WHERE sends > 1) AS "more than once",
       $users - count(*) AS never
FROM (SELECT token, count(*) AS sends FROM delivery_outcomes WHERE status = 200 GROUP BY token) t;
SQL
