#!/usr/bin/env bash
# Soak: `blimp api`, two `blimp worker`s and `blimp apns-sim` (release builds) on a throwaway PostgreSQL (fsync on)
# for N minutes, under registrations (`blimp simulate-devices`), a steady stream of Live Activity updates by name,
# and faults: the simulator answers 1% of requests 500, 1% 503 and 1% 429, sends GOAWAY every 500 streams and drops a
# connection every 1,999; a third of the way in one worker is killed with SIGKILL (and started again); two thirds of
# the way in PostgreSQL is restarted. Then it waits for the queue to empty and prints what happened to every push
# answered 202, what was sent twice, and each process's memory (RSS) every minute, with its growth per hour.
#
#   bench/soak.sh [minutes=5] [registrations/s=100] [pushes/s=5] [names=20] [activities per name=500]
#
# "Lost" is a push answered 202 that never finished, or a token of a finished push neither sent nor counted as
# failed. "Sent twice" counts APNs acceptances the workers did not record (a batch resent after the kill or the
# restart) and tokens recorded twice for one push. Figures go in docs/performance.md.
set -euo pipefail
cd "$(dirname "$0")/.."
minutes=${1:-5}
registrations=${2:-100}
pushes=${3:-5}
names=${4:-20}
per_name=${5:-500}
source bench/setup.sh
read -r sim_port admin_port api_port < <(loopback_ports 3)
start_simulator "$sim_port" "$admin_port" --go-away-every 500 --drop-every 1999 --log-level warning
simulator=${pids[-1]}
start_api "$api_port"
api=${pids[-1]}
wait_for_port "$admin_port"
curl -sf -X PUT "http://127.0.0.1:$admin_port/faults" \
    -d '{"internal_server_error_fraction": 0.01, "service_unavailable_fraction": 0.01, "too_many_requests_fraction": 0.01}' >/dev/null
start_worker "$sim_port" --name w1 2>>"$work/w1.log"; w1=${pids[-1]}
start_worker "$sim_port" --name w2 2>>"$work/w2.log"; w2=${pids[-1]}

# The names' activities, seeded with SQL; registrations add channels tracking "name-0" as they go.
psql -q "$DATABASE_URL" <<SQL
INSERT INTO channels (app_id, channel_id, opt_in)
    SELECT 1, md5('soak/' || i)::uuid, true FROM generate_series(1, $names * $per_name) i;
INSERT INTO live_activities (app_id, channel_id, name, activity_id, token, state, started_at, action_ts_ms)
    SELECT 1, md5('soak/' || i)::uuid, 'name-' || (i % $names), 'a' || i, md5('t/' || i) || md5('u/' || i), 'active', now(), 1
    FROM generate_series(1, $names * $per_name) i;
VACUUM ANALYZE;
SQL

echo "soak: $minutes min, $registrations registrations/s, $pushes pushes/s over $names names of $per_name activities; $postgres_line"
rss() { awk '/VmRSS/ {print int($2 / 1024)}' "/proc/$1/status" 2>/dev/null || echo 0; }
seconds=$((minutes * 60))

BLIMP_APP_SECRET=$(field app_secret) "$blimp" simulate-devices --url "http://127.0.0.1:$api_port" --app-key "$(field app_key)" \
    --count $((registrations * seconds)) --rate "$registrations" --concurrency 16 --activity-name name-0 >"$work/devices.log" 2>&1 &
devices=$!
pids+=($devices)

# The pushes: one update every 1/P s, to the names in turn; their ids and statuses go to pushes.log.
python3 - "$api_port" "$(field app_key):$(field master_secret)" "$pushes" "$names" "$seconds" >"$work/pushes.log" <<'PY' &
import base64, http.client, json, sys, time
port, auth, rate, names, seconds = int(sys.argv[1]), sys.argv[2], float(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
headers = {"Authorization": "Basic " + base64.b64encode(auth.encode()).decode(), "Content-Type": "application/json",
           "Accept": "application/vnd.urbanairship+json; version=3"}
start, sent = time.monotonic(), 0
while time.monotonic() - start < seconds:
    body = {"audience": "all", "device_types": ["ios"], "notification": {"ios": {"live_activity": {
        "event": "update", "name": f"name-{sent % names}", "priority": 5, "content_state": {"n": sent}}}}}
    try:
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        connection.request("POST", "/api/push", json.dumps(body), headers)
        response = connection.getresponse()
        answer = response.read()
        ids = json.loads(answer).get("push_ids", []) if response.status == 202 else []
        print(response.status, *ids, flush=True)
    except Exception as error:
        print(0, flush=True)
    sent += 1
    time.sleep(max(0, start + sent / rate - time.monotonic()))
PY
load=$!
pids+=($load)

# The faults at a third and two thirds of the run; each process's RSS every minute.
samples="$work/rss.txt"
for ((t = 0; t < seconds; t += 10)); do
    if ((t == seconds / 3 / 10 * 10)); then
        echo "t=${t}s: worker w1 killed (SIGKILL) and started again"
        kill -9 "$w1"; wait "$w1" 2>/dev/null || true
        start_worker "$sim_port" --name w1 2>>"$work/w1.log"; w1=${pids[-1]}
    fi
    if ((t == 2 * seconds / 3 / 10 * 10)); then
        echo "t=${t}s: PostgreSQL restarted"
        # pg_ctl restart starts the server again with the options it had.
        as_cluster_owner "$(postgres_bindir)/pg_ctl" -D "$work/pg" -w -s -m fast restart -l "$work/pg/server.log"
    fi
    if ((t % 60 == 0 && t > 0)); then echo "$((t / 60)) $(rss $api) $(rss $w1) $(rss $w2) $(rss $simulator)" >>"$samples"; fi
    sleep 10
done
wait "$load" || true
kill "$devices" 2>/dev/null || true
echo "$minutes $(rss $api) $(rss $w1) $(rss $w2) $(rss $simulator)" >>"$samples"

# Every accepted push finished (or two minutes passed). The ids go in a table: thousands of them would not fit one
# command-line argument.
awk '$1 == 202 {print $2}' "$work/pushes.log" >"$work/accepted.txt"
psql -q "$DATABASE_URL" -c "CREATE TABLE soak_accepted (push_id uuid PRIMARY KEY)" -c "\copy soak_accepted FROM '$work/accepted.txt'"
ids="SELECT push_id FROM soak_accepted"
for _ in $(seq 240); do
    open=$(psql -tAq "$DATABASE_URL" -c "SELECT count(*) FROM pushes WHERE push_id IN ($ids) AND state NOT IN ('done', 'superseded', 'failed', 'cancelled')")
    [ "$open" = 0 ] && break
    sleep 0.5
done
accepted_by_apns=$(curl -s "http://127.0.0.1:$admin_port/counters" | python3 -c 'import json,sys; print(json.load(sys.stdin)["accepted"])')

echo
echo "push answers: $(awk '{print $1}' "$work/pushes.log" | sort | uniq -c | awk '{printf "%s %s  ", $2, $1}')"
echo "registrations: $(grep -o 'registered [0-9]*/[0-9]* devices' "$work/devices.log" | tail -n 1)"
psql -q "$DATABASE_URL" <<SQL
\pset footer off
SELECT state AS "pushes answered 202", count(*) FROM pushes WHERE push_id IN ($ids) GROUP BY state ORDER BY state;
SELECT count(*) FILTER (WHERE state NOT IN ('done', 'superseded', 'failed', 'cancelled')) AS "pushes lost (unfinished)",
       coalesce(sum((counts->>'targets')::int - (counts->>'sent')::int - (counts->>'superseded')::int
                    - (SELECT coalesce(sum(value::int), 0) FROM jsonb_each_text(counts->'failed'))) FILTER (WHERE state = 'done'), 0)
           AS "tokens lost (done pushes)",
       coalesce(sum((SELECT coalesce(sum(value::int), 0) FROM jsonb_each_text(counts->'failed'))), 0) AS "sends failed after retries"
FROM pushes WHERE push_id IN ($ids);
SELECT count(*) AS "tokens recorded twice for one push"
FROM (SELECT 1 FROM delivery_outcomes WHERE status = 200 GROUP BY push_id, token HAVING count(*) > 1) twice;
SQL
recorded=$(psql -tAq "$DATABASE_URL" -c "SELECT count(*) FROM delivery_outcomes WHERE status = 200")
echo "APNs accepted $accepted_by_apns, workers recorded $recorded: $((accepted_by_apns - recorded)) sent and not recorded (resent)"
echo
echo "RSS in MB by minute (w1 was killed and started again at a third of the run):"
printf '%6s %8s %8s %8s %8s\n' minute api w1 w2 apns-sim
awk '{printf "%6s %8d %8d %8d %8d\n", $1, $2, $3, $4, $5}' "$samples"
awk 'NR == 1 {a = $2; w = $4; s = $5; m = $1} END {if (NR > 1) printf "growth from minute %d, MB/h: api %.1f, w2 %.1f, apns-sim %.1f\n", m, ($2 - a) * 60 / ($1 - m), ($4 - w) * 60 / ($1 - m), ($5 - s) * 60 / ($1 - m)}' "$samples"
