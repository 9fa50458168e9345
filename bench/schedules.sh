#!/usr/bin/env bash
# Schedule firing, end to end: N one-time schedules due in the same second, created through `POST /api/schedules`
# (1,000 a request), fired by W `blimp worker`s sending to `blimp apns-sim`, release builds, PostgreSQL with fsync on.
# For each occurrence, how late it fired (`schedule_firings.fired_at` less its time) and how late its push's APNs
# answer was recorded (`delivery_outcomes.sent_at`); each schedule's push goes to one channel's Live Activity token, so
# firing, not fan-out, is measured. Checks that every schedule fired exactly once. Printed as a table.
#
#   bench/schedules.sh [N=1000] [W=1]
set -euo pipefail
cd "$(dirname "$0")/.."
schedules=${1:-1000}
workers=${2:-1}
source bench/setup.sh
auth="$(field app_key):$(field master_secret)"

read -r sim_port admin_port api_port < <(loopback_ports 3)
start_simulator "$sim_port" "$admin_port"
start_api "$api_port"

# One channel tracking one Live Activity per schedule (the name s<i>), so each fired update has one target.
psql -q "$DATABASE_URL" <<SQL
INSERT INTO channels (app_id, channel_id, opt_in) VALUES (1, md5('bench')::uuid, true);
INSERT INTO live_activities (app_id, channel_id, name, activity_id, token, state, started_at, action_ts_ms)
    SELECT 1, md5('bench')::uuid, 's' || i, 'a' || i, md5('t/' || i) || md5('u/' || i), 'active', now(), 1
    FROM generate_series(1, $schedules) i;
VACUUM ANALYZE;
SQL

# Create them due at a whole second far enough ahead for the requests to finish, then start the workers.
due=$(python3 - "$api_port" "$auth" "$schedules" <<'PY'
import base64, datetime, http.client, json, sys, time
port, auth, count = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
headers = {"Authorization": "Basic " + base64.b64encode(auth.encode()).decode(),
           "Accept": "application/vnd.urbanairship+json; version=3", "Content-Type": "application/json"}
due = datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0) + datetime.timedelta(seconds=10 + count // 500)
api = http.client.HTTPConnection("127.0.0.1", port)
for first in range(1, count + 1, 1000):
    body = [{"name": f"bench {i}", "schedule": {"scheduled_time": due.strftime("%Y-%m-%dT%H:%M:%S")},
             "push": {"audience": "all", "device_types": ["ios"],
                      "notification": {"ios": {"live_activity": {"event": "update", "name": f"s{i}", "priority": 5,
                                                                 "content_state": {"score": i}}}}}}
            for i in range(first, min(first + 1000, count + 1))]
    api.request("POST", "/api/schedules", json.dumps(body), headers)
    response = api.getresponse()
    answer = response.read()
    if response.status != 201:
        sys.exit(f"creating schedules: {response.status} {answer[:300]}")
if datetime.datetime.now(datetime.timezone.utc) >= due:
    sys.exit("the schedules were created after their time: the bench cannot measure firing")
print(due.strftime("%Y-%m-%d %H:%M:%S"))
PY
)
for _ in $(seq "$workers"); do start_worker "$sim_port"; done

# Wait until every schedule fired and every push finished.
for _ in $(seq 600); do
    left=$(psql -Atq "$DATABASE_URL" -c "SELECT ($schedules - (SELECT count(*) FROM schedule_firings))
        + (SELECT count(*) FROM pushes WHERE state NOT IN ('done', 'failed', 'cancelled'))")
    [ "$left" = 0 ] && break
    sleep 0.5
done
[ "$left" = 0 ] || { echo "not every schedule fired and finished within 5 minutes ($left left)" >&2; exit 1; }

echo "$schedules one-time schedules due at $due UTC, $workers worker(s); $postgres_line"
echo
psql -q "$DATABASE_URL" <<SQL
\pset footer off
WITH firing AS (
    SELECT extract(epoch FROM f.fired_at - (f.occurrence AT TIME ZONE 'UTC')) * 1000 AS fired_ms,
           (SELECT extract(epoch FROM max(o.sent_at) - (f.occurrence AT TIME ZONE 'UTC')) * 1000
            FROM delivery_outcomes o WHERE o.app_id = f.app_id AND o.push_id = f.push_id) AS recorded_ms
    FROM schedule_firings f
)
SELECT 'fired after its time' AS "ms", round(percentile_cont(0.5) WITHIN GROUP (ORDER BY fired_ms)::numeric, 1) AS p50,
       round(percentile_cont(0.99) WITHIN GROUP (ORDER BY fired_ms)::numeric, 1) AS p99, round(max(fired_ms)::numeric, 1) AS max
FROM firing
UNION ALL
SELECT 'APNs answer recorded after its time', round(percentile_cont(0.5) WITHIN GROUP (ORDER BY recorded_ms)::numeric, 1),
       round(percentile_cont(0.99) WITHIN GROUP (ORDER BY recorded_ms)::numeric, 1), round(max(recorded_ms)::numeric, 1)
FROM firing;
SELECT count(*) AS firings, count(DISTINCT (schedule_id, occurrence)) AS distinct_occurrences,
       count(*) FILTER (WHERE push_id IS NULL) AS skipped FROM schedule_firings;
SQL
