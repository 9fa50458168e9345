#!/usr/bin/env bash
# Per-user pushes of a shared name, as a backend sends them: users each track an activity named `delivery`, and each
# gets one update to its own channel (`{"ios_channel": …}`), every other one with the caller's `timestamp`.
# `blimp api` → PostgreSQL (fsync on) → `blimp worker` × W → `blimp apns-sim`, release builds. Phases measured apart
# (two cores cannot run intake and drain at full speed at once), each printed as a table:
#   1. intake: N updates posted through the API from C connections (push-load, bench/PushLoad), the workers stopped;
#      every 202 must be a row;
#   2. drain: W workers started on the queue, from the first claim until nothing is queued or sending;
#   3. baseline: pgqueuer (a PostgreSQL job queue, on PyPI; bench/pgqueuer-drain.py) drains N no-op jobs with 2
#      consumers on the same server, measured the same way: the ceiling a queue of one row per job reaches here;
#   4. steady: with everything running, R updates a second for S seconds: 202 → APNs answer recorded
#      (`delivery_outcomes.sent_at - pushes.accepted_at`) p50 and p99, and the queue (queued or sending) sampled every
#      2 s, so that a growing queue shows.
# Then what became of them: pushes by state, tokens sent once, more than once or never.
#
#   bench/per-user.sh [N=50000] [C=64] [W=2] [R=1000] [S=60]
#
# SEND_EVENTS=off measures without a SEND event per token (blimp apps send-events); the PUSH_BODY and PUSH_FINISHED of
# each push stay.
# Uses release builds (swift build -c release --product blimp, and --product push-load; BLIMP and PUSH_LOAD override).
set -euo pipefail
cd "$(dirname "$0")/.."
load=${PUSH_LOAD:-.build/release/push-load}
[ -x "$load" ] || { echo "build first: swift build -c release --product push-load" >&2; exit 1; }
users=${1:-50000}
connections=${2:-64}
workers=${3:-2}
rate=${4:-1000}
seconds=${5:-60}
python3 -c "import pgqueuer, asyncpg" 2>/dev/null || pip install -q pgqueuer==1.6.0 asyncpg >/dev/null 2>&1
source bench/setup.sh
auth="$(field app_key):$(field master_secret)"
"$blimp" apps send-events --app-key "$(field app_key)" "${SEND_EVENTS:-on}" >/dev/null
read -r sim_port admin_port api_port < <(loopback_ports 3)
start_simulator "$sim_port" "$admin_port"
start_api "$api_port"
steady=$((rate * seconds))
psql -q "$DATABASE_URL" <<SQL
INSERT INTO channels (app_id, channel_id, opt_in) SELECT 1, md5('user/' || i)::uuid, true FROM generate_series(1, $users + $steady) i;
INSERT INTO live_activities (app_id, channel_id, name, activity_id, token, state, started_at, action_ts_ms)
    SELECT 1, md5('user/' || i)::uuid, 'delivery', 'a' || i, md5('t/' || i) || md5('u/' || i), 'active', now(), 1
    FROM generate_series(1, $users + $steady) i;
VACUUM ANALYZE;
SQL
count() { psql -At "${2:-$DATABASE_URL}" -c "$1"; }
unfinished="SELECT count(*) FROM pushes WHERE state IN ('queued', 'sending')"
# Seconds from the first item taken off a queue of $4 (query $2 on database $1 counts those waiting) until the query
# $3 counts none left.
time_drain() {
    local url=$1 waiting=$2 left=$3 total=$4 start end
    while [ "$(count "$waiting" "$url")" -ge "$total" ]; do sleep 0.02; done
    start=$(date +%s.%N)
    while [ "$(count "$left" "$url")" != 0 ]; do sleep 0.02; done
    end=$(date +%s.%N)
    python3 -c "print($end - $start)"
}

echo "$postgres_line; $users users, $connections connections, $workers workers; steady $rate/s for $seconds s; SEND events ${SEND_EVENTS:-on}"
echo
echo "== 1. intake: one update per user through POST /api/push, workers stopped"
echo "| pushes | seconds | pushes/s | p50 ms | p99 ms | answers |"
echo "|---|---|---|---|---|---|"
"$load" "$api_port" "$auth" 1 "$users" "$connections"
echo "rows in pushes: $(count 'SELECT count(*) FROM pushes')"

echo
echo "== 2. drain: $workers workers on the queue; 3. baseline: pgqueuer, 2 consumers, $users no-op jobs"
for _ in $(seq "$workers"); do start_worker "$sim_port"; done
blimp_seconds=$(time_drain "$DATABASE_URL" "SELECT count(*) FROM pushes WHERE state = 'queued'" "$unfinished" "$users")
psql -q "$DATABASE_URL" -c "CREATE DATABASE pgq"
pgq_url="${DATABASE_URL%/*}/pgq"
python3 bench/pgqueuer-drain.py enqueue "$pgq_url" "$users"
consumers=()
for _ in 1 2; do python3 bench/pgqueuer-drain.py drain "$pgq_url" & consumers+=($!); done
pgq_seconds=$(time_drain "$pgq_url" "SELECT count(*) FROM pgqueuer WHERE status = 'queued'" "SELECT count(*) FROM pgqueuer" "$users")
wait "${consumers[@]}"
python3 - "$users" "$blimp_seconds" "$pgq_seconds" <<'PY'
import sys
n, blimp, pgq = int(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3])
print("| queue | items | seconds | items/s |\n|---|---|---|---|")
print("| Blimp, per-user pushes | %d | %.2f | %.0f |" % (n, blimp, n / blimp))
print("| pgqueuer, no-op jobs | %d | %.2f | %.0f |" % (n, pgq, n / pgq))
print("Blimp ÷ pgqueuer: %.2f" % (pgq / blimp))
PY

echo
echo "== 4. steady: $rate updates/s for $seconds s, everything running"
since=$(count "SELECT now()")
(while true; do count "$unfinished"; sleep 2; done) > "$work/queue.txt" &
sampler=$!
echo "| pushes | seconds | pushes/s | p50 ms | p99 ms | answers |"
echo "|---|---|---|---|---|---|"
"$load" "$api_port" "$auth" $((users + 1)) $((users + steady)) "$connections" "$rate"
while [ "$(count "$unfinished")" != 0 ]; do sleep 0.1; done
kill "$sampler"
psql -q "$DATABASE_URL" <<SQL
\pset footer off
SELECT count(*) AS pushes,
       round((percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM o.sent_at - p.accepted_at)) * 1000)::numeric, 1) AS "202 → APNs p50 ms",
       round((percentile_cont(0.99) WITHIN GROUP (ORDER BY extract(epoch FROM o.sent_at - p.accepted_at)) * 1000)::numeric, 1) AS "p99 ms"
FROM pushes p JOIN delivery_outcomes o ON o.app_id = p.app_id AND o.push_id = p.push_id
WHERE p.accepted_at >= '$since';
SQL
python3 -c "
q = [int(x) for x in open('$work/queue.txt').read().split()]
print('queued or sending, every 2 s: first %d, most %d, last %d' % (q[0], max(q), q[-1]))"

echo
echo "== what became of them"
psql -q "$DATABASE_URL" <<SQL
\pset footer off
SELECT state, count(*) AS pushes, sum((counts->>'sent')::int) AS sent, sum((counts->>'superseded')::int) AS superseded
FROM pushes GROUP BY state ORDER BY state;
SELECT count(*) FILTER (WHERE sends = 1) AS "tokens sent once", count(*) FILTER (WHERE sends > 1) AS "more than once",
       $users + $steady - count(*) AS never
FROM (SELECT token, count(*) AS sends FROM delivery_outcomes WHERE status = 200 GROUP BY token) t;
SQL
