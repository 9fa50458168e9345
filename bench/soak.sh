#!/usr/bin/env bash
# Soak: `blimp api`, two `blimp worker`s (w1, w2) and `blimp apns-sim` (release builds) for N minutes on a PostgreSQL
# primary (fsync on) with a synchronous streaming standby (`pg_basebackup -R -X stream`, on another loopback port,
# `synchronous_standby_names = '*'` on the primary), DATABASE_URL naming both (target_session_attrs=read-write), under
# a load that runs the whole time:
#   - registrations: `blimp simulate-devices` processes, each registering one device at a time (ten a second), each
#     device tracking "name-0" (a process stopped by a failed request is started again);
#   - per-user pushes: Live Activity updates, each to one channel ({"ios_channel": id}) of the NAMES × PER_NAME seeded
#     activities, PUSHES a second;
#   - fan-outs: an update to "all" of one seeded name (the names in turn: PER_NAME activities, and name-0's grow with
#     the registrations) every 30 s;
#   - schedules: a one-time schedule created every minute (POST /api/schedules), firing an update 30 s later;
#   - console reads: four console pages every 5 s, signed in with the master secret;
#   - an event stream reader (POST /api/events, from its earliest event, resuming from its last offset after any
#     error or end) and a webhook endpoint on loopback (BLIMP_WEBHOOKS_ALLOW_PRIVATE=1) answering every delivery 200.
# Every push carries an Idempotency-Key and is sent again with it after a 503 (honouring Retry-After) or no answer
# (bench/soak-load.py has the clients). The simulator answers 1% of requests 500, 1% 503 and 1% 429, sends GOAWAY
# every 500 streams and drops a connection every 1,999. Faults, as fractions of the run (for 60 minutes): w1 killed
# with SIGKILL and started again at once every 10 minutes (1/6 ... 5/6), w2 never touched; the api stopped with SIGTERM
# and started again on its port at 7/60 and 14/60; a failover at 17/60 (the primary stopped with `pg_ctl stop -m
# immediate`, the standby promoted 2 s later). The RSS of api, w1, w2 and apns-sim is sampled every 30 s, and
# the anonymous part of the api's and w2's (RssAnon: heap and stacks, not pages mapped from the binary and libraries).
# Then it waits for the queue to empty and the stream and the webhook to catch up, and prints what became of every
# push answered 202, what was sent twice, the registrations, schedules, console answers, events and webhook
# deliveries, each process's warnings and errors, the RSS every 5 minutes (every minute in runs under 30 minutes) and
# the growth of the api and w2 over the run's last two thirds (after the last api restart and the failover: the mean
# of the samples in the first minute of that window against the last minute's, PASS under 5 MB each), and draws the
# RSS with the faults marked (bench/soak-plot.py) to SOAK_PLOT (default: beside the work folder, which is removed).
#
#   bench/soak.sh [minutes=60] [registrations/s=100] [pushes/s=20] [names=20] [activities per name=2000]
#
# SOAK_KEEP=dir copies the processes' and clients' logs, the samples and the fault times there.
#
# "Lost" is a push answered 202 that never finished (or is not in the database), or a token of a finished push
# neither sent, superseded nor counted as failed. "Sent twice" counts APNs acceptances the workers did not record (a
# batch resent after a kill, a restart or the failover) and tokens recorded twice for one push; a push queued that
# no 202 answer names is a request queued twice despite its Idempotency-Key. Figures go in docs/performance.md.
set -euo pipefail
cd "$(dirname "$0")/.."
minutes=${1:-60}
registrations=${2:-100}
pushes=${3:-20}
names=${4:-20}
per_name=${5:-2000}
export BLIMP_WEBHOOKS_ALLOW_PRIVATE=1
source bench/setup.sh
app_key=$(field app_key)
master_secret=$(field master_secret)
app_secret=$(field app_secret)
seconds=$((minutes * 60))
bin=$(postgres_bindir)

# The standby, stopped (and removed with the work folder) on exit.
standby="$work/standby"
forget() { local kept=() pid; for pid in "${pids[@]}"; do [ "$pid" = "$1" ] || kept+=("$pid"); done; pids=("${kept[@]}"); }
trap 'for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done; stop_cluster "$standby"; cleanup' EXIT
# The primary's own settings (bench/setup.sh's CLUSTER_SETTINGS), which the standby is started with too: a hot
# standby needs max_connections as high.
settings=$(psql -tAX "$DATABASE_URL" -c "SELECT string_agg(format('-c %s=%s', name, setting), ' ') FROM pg_settings
    WHERE source = 'command line' AND name NOT IN ('port', 'listen_addresses', 'unix_socket_directories')")
# Both servers on ports outside 54320-54999, where scripts/postgres.sh looks for free ones: once the primary is
# stopped, a cluster started meanwhile by another script must not take its port, where DATABASE_URL would find it.
while read -r primary_port standby_port < <(loopback_ports 2); do
    ((primary_port < 54320 || primary_port > 54999)) && ((standby_port < 54320 || standby_port > 54999)) && break
done
pg_start() {
    as_cluster_owner "$bin/pg_ctl" -D "$1" -l "$1/server.log" -w -s start \
        -o "-p $2 -k $1 -c listen_addresses=127.0.0.1 $settings" || { tail -n 20 "$1/server.log" >&2; exit 1; }
}
as_cluster_owner "$bin/pg_ctl" -D "$work/pg" -w -s -m fast stop
pg_start "$work/pg" "$primary_port"
primary_url="postgres://blimp@127.0.0.1:$primary_port/blimp"
mkdir -m 700 "$standby"
[ "$(id -u)" = 0 ] && chown postgres:postgres "$standby"
# (It skips the primary's socket file, which lives in its folder, saying so: that warning is dropped.)
as_cluster_owner "$bin/pg_basebackup" -h 127.0.0.1 -p "$primary_port" -U blimp -D "$standby" -R -X stream 2>&1 |
    { grep -v 'skipping special file' >&2 || true; }
pg_start "$standby" "$standby_port"
# Synchronous on the primary only: the standby, once promoted, has no standby to wait for.
psql -qtAX "$primary_url" -c "ALTER SYSTEM SET synchronous_standby_names = '*'" -c "SELECT pg_reload_conf()" >/dev/null
for _ in $(seq 100); do
    [ "$(psql -tAX "$primary_url" -c "SELECT sync_state FROM pg_stat_replication")" = sync ] && break
    sleep 0.1
done
[ "$(psql -tAX "$primary_url" -c "SELECT sync_state FROM pg_stat_replication")" = sync ] || { echo "the standby is not synchronous" >&2; exit 1; }
export DATABASE_URL="postgres://blimp@127.0.0.1:$primary_port,127.0.0.1:$standby_port/blimp?target_session_attrs=read-write&connect_timeout=2"

read -r sim_port admin_port api_port hook_port < <(loopback_ports 4)
start_simulator "$sim_port" "$admin_port" --go-away-every 500 --drop-every 1999 --log-level warning
simulator=${pids[-1]}
start_api "$api_port" 2>>"$work/api.log"
api=${pids[-1]}
wait_for_port "$admin_port"
curl -sf -X PUT "http://127.0.0.1:$admin_port/faults" \
    -d '{"internal_server_error_fraction": 0.01, "service_unavailable_fraction": 0.01, "too_many_requests_fraction": 0.01}' >/dev/null
start_worker "$sim_port" --name w1 2>>"$work/w1.log"; w1=${pids[-1]}
start_worker "$sim_port" --name w2 2>>"$work/w2.log"; w2=${pids[-1]}

# The names' activities, seeded with SQL (bench/soak-load.py derives the same channel ids).
psql -q "$DATABASE_URL" <<SQL
INSERT INTO channels (app_id, channel_id, opt_in)
    SELECT 1, md5('soak/' || i)::uuid, true FROM generate_series(1, $names * $per_name) i;
INSERT INTO live_activities (app_id, channel_id, name, activity_id, token, state, started_at, action_ts_ms)
    SELECT 1, md5('soak/' || i)::uuid, 'name-' || (i % $names), 'a' || i, md5('t/' || i) || md5('u/' || i), 'active', now(), 1
    FROM generate_series(1, $names * $per_name) i;
VACUUM ANALYZE;
SQL

echo "soak: $minutes min, $registrations registrations/s, $pushes per-user pushes/s and a fan-out every 30 s over $names names of $per_name activities; $postgres_line, a synchronous standby"
client=(python3 bench/soak-load.py "$api_port" "$app_key" "$master_secret")

# The webhook endpoint, then its registration; the event stream from the earliest event.
"${client[@]}" webhook "$hook_port" "$work/webhook.json" 2>>"$work/load.log" &
pids+=($!)
wait_for_port "$hook_port"
events_before=$(psql -tAq "$DATABASE_URL" -c "SELECT count(*) FROM events WHERE app_id = 1")
curl -sf -u "$app_key:$master_secret" -H 'Accept: application/vnd.urbanairship+json; version=3' \
    "http://127.0.0.1:$api_port/api/webhooks" -d '{"url": "http://127.0.0.1:'"$hook_port"'/hooks"}' >/dev/null
"${client[@]}" events "$work/events.json" 2>>"$work/load.log" &
pids+=($!)

# Registrations for the whole run, from processes of `blimp simulate-devices` registering one device at a time, ten a
# second each: a failed request (a 503 while the api restarts or the database fails over) stops one, which is started
# again for the time left. (With several devices at a time, the others would go on after a failure unpaced until
# each failed or all were registered.)
register() {
    local rate=$1 end=$(($(date +%s) + seconds)) child= left status
    trap 'kill $child 2>/dev/null; exit 0' TERM
    while left=$((end - $(date +%s))) && ((left > 0)); do
        BLIMP_APP_SECRET=$app_secret "$blimp" simulate-devices --url "http://127.0.0.1:$api_port" --app-key "$app_key" \
            --count $((rate * left)) --rate "$rate" --concurrency 1 --activity-name name-0 >>"$work/devices.log" 2>&1 &
        child=$!
        status=0
        wait "$child" || status=$?
        ((status == 0)) || echo "$(date +%s) $status" >>"$work/devices-stopped.txt"
        sleep 1
    done
}
registrars=()
for ((left = registrations; left > 0; left -= 10)); do
    register $((left < 10 ? left : 10)) &
    registrars+=($!)
done
pids+=("${registrars[@]}")

"${client[@]}" pushes "$seconds" "$pushes" "$names" "$per_name" >"$work/pushes.log" 2>>"$work/load.log" &
clients=($!)
"${client[@]}" fanouts "$seconds" 30 "$names" >"$work/fanouts.log" 2>>"$work/load.log" &
clients+=($!)
"${client[@]}" schedules "$seconds" 60 "$names" >"$work/schedules.log" 2>>"$work/load.log" &
clients+=($!)
"${client[@]}" console "$seconds" 5 "$work/console.json" 2>>"$work/load.log" &
clients+=($!)
pids+=("${clients[@]}")

# The faults, each printed and written to $faults for the chart; the RSS of each process every 30 s (the api's and
# w1's current process), and the anonymous part of the api's and w2's.
samples="$work/samples.txt"
faults="$work/faults.txt"
: >"$samples"
: >"$faults"
start=$SECONDS
elapsed() { echo $((SECONDS - start)); }
in_minutes() { awk -v t="$1" 'BEGIN {printf "%.1f", t / 60}'; }
# memory PID [FIELD]: a field of /proc/PID/status in MB, VmRSS unless told (RssAnon: the resident part that is the
# process's own (heap, stacks), not pages of the binary and libraries mapped from files).
memory() { local mb; mb=$(awk -v f="${2:-VmRSS}:" '$1 == f {printf "%.1f", $2 / 1024}' "/proc/$1/status" 2>/dev/null || true); echo "${mb:-0}"; }
sample() {
    echo "$(in_minutes "$(elapsed)") $(memory "$api") $(memory "$w1") $(memory "$w2") $(memory "$simulator")" \
        "$(memory "$api" RssAnon) $(memory "$w2" RssAnon)" >>"$samples"
}
# Whether PID runs (an exited child stays a zombie until waited for).
running() { [ -e "/proc/$1" ] && [ "$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null)" != Z ]; }
fault() {
    local t
    t=$(elapsed)
    printf 't=%ss (minute %s): %s\n' "$t" "$(in_minutes "$t")" "$2"
    echo "$(in_minutes "$t") $1" >>"$faults"
}
ready_after() {
    local from=$SECONDS
    for _ in $(seq 300); do curl -sf "http://127.0.0.1:$api_port/ready" >/dev/null && break; sleep 0.2; done
    echo $((SECONDS - from))
}
kill_w1() {
    fault "w1 killed" "w1 killed (SIGKILL) and started again"
    kill -9 "$w1"
    wait "$w1" 2>/dev/null || true
    forget "$w1"
    start_worker "$sim_port" --name w1 2>>"$work/w1.log"; w1=${pids[-1]}
}
restart_api() {
    local from=$SECONDS status=0
    fault "api restarted" "api stopped (SIGTERM) and started again"
    kill -TERM "$api"
    for _ in $(seq 300); do running "$api" || break; sleep 0.1; done
    if running "$api"; then
        echo "  the api had not exited 30 s after SIGTERM: SIGKILL"
        kill -9 "$api"
    fi
    wait "$api" 2>/dev/null || status=$?
    forget "$api"
    echo "  the api exited after $((SECONDS - from)) s with status $status"
    start_api "$api_port" 2>>"$work/api.log"; api=${pids[-1]}
    ready_after >/dev/null
    echo "  ready again $((SECONDS - from)) s after SIGTERM"
}
failover() {
    fault "failover" "failover: the primary stopped (pg_ctl stop -m immediate), the standby promoted 2 s later"
    as_cluster_owner "$bin/pg_ctl" -D "$work/pg" -w -s -m immediate stop
    sleep 2
    as_cluster_owner "$bin/pg_ctl" -D "$standby" -w -s promote
    echo "  the api's /ready answered 200 again $(ready_after) s after the promotion"
}
mapfile -t plan < <(
    {
        for k in 1 2 3 4 5; do echo "$((seconds * k / 6)) kill_w1"; done
        echo "$((seconds * 7 / 60)) restart_api"
        echo "$((seconds * 14 / 60)) restart_api"
        echo "$((seconds * 17 / 60)) failover"
        echo "$seconds end"
    } | sort -n -k1,1
)
next_sample=0
for step in "${plan[@]}"; do
    at=${step%% *}
    while (($(elapsed) < at)); do
        if (($(elapsed) >= next_sample)); then
            sample
            next_sample=$(($(elapsed) / 30 * 30 + 30))
        fi
        sleep 1
    done
    [ "${step#* }" = end ] || ${step#* }
done

wait "${clients[@]}" || true
for pid in "${registrars[@]}"; do
    kill "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
    forget "$pid"
done
sample

# Every push finished and every schedule fired (or five minutes passed). The ids go in tables: thousands of them
# would not fit one command-line argument.
{
    awk '$1 == 202 {print $2 "\tper-user"}' "$work/pushes.log"
    awk '$1 == 202 {print $2 "\tfan-out"}' "$work/fanouts.log"
} >"$work/accepted.tsv"
awk '$1 == 201 {print $2}' "$work/schedules.log" >"$work/schedules.txt"
psql -q "$DATABASE_URL" -c "CREATE TABLE soak_accepted (push_id uuid, kind text)" -c "\copy soak_accepted FROM '$work/accepted.tsv'" \
    -c "CREATE TABLE soak_schedules (schedule_id uuid)" -c "\copy soak_schedules FROM '$work/schedules.txt'"
finished="('done', 'superseded', 'failed', 'cancelled')"
for _ in $(seq 600); do
    open=$(psql -tAq "$DATABASE_URL" -c "SELECT (SELECT count(*) FROM pushes WHERE state NOT IN $finished)
        + (SELECT count(*) FROM soak_schedules s WHERE NOT EXISTS (SELECT 1 FROM schedule_firings f WHERE f.schedule_id = s.schedule_id))")
    [ "$open" = 0 ] && break
    sleep 0.5
done
# The stream and the webhook have every event (or two more minutes passed).
status_of() { python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$@" 2>/dev/null || echo 0; }
for _ in $(seq 120); do
    db_events=$(psql -tAq "$DATABASE_URL" -c "SELECT count(*) FROM events WHERE app_id = 1")
    (($(status_of "$work/events.json" events) >= db_events && $(status_of "$work/webhook.json" events) >= db_events - events_before)) && break
    sleep 1
done
accepted_by_apns=$(curl -s "http://127.0.0.1:$admin_port/counters" | python3 -c 'import json,sys; print(json.load(sys.stdin)["accepted"])')

echo
answers() { awk '{n[$1]++; if ($NF > 1) again++} END {for (s in n) printf "%s %d  ", s, n[s]; printf "(%d after more than one attempt)", again}' "$1"; }
echo "per-user push answers: $(answers "$work/pushes.log")"
echo "fan-out push answers: $(answers "$work/fanouts.log")"
psql -q "$DATABASE_URL" <<SQL
\pset footer off
SELECT a.kind AS "answered 202", coalesce(p.state, 'not in the database') AS state, count(*)
FROM (SELECT DISTINCT push_id, kind FROM soak_accepted) a LEFT JOIN pushes p USING (push_id) GROUP BY 1, 2 ORDER BY 1, 2;
SELECT a.kind AS "answered 202",
       count(*) FILTER (WHERE p.state IS NULL OR p.state NOT IN $finished) AS "pushes lost (unfinished)",
       coalesce(sum((p.counts->>'targets')::int - (p.counts->>'sent')::int - (p.counts->>'superseded')::int
                    - (SELECT coalesce(sum(value::int), 0) FROM jsonb_each_text(p.counts->'failed'))) FILTER (WHERE p.state = 'done'), 0)
           AS "tokens lost (done pushes)",
       coalesce(sum((SELECT coalesce(sum(value::int), 0) FROM jsonb_each_text(p.counts->'failed'))), 0) AS "sends failed after retries"
FROM (SELECT DISTINCT push_id, kind FROM soak_accepted) a LEFT JOIN pushes p USING (push_id) GROUP BY 1 ORDER BY 1;
SELECT (SELECT count(*) FROM pushes p WHERE NOT EXISTS (SELECT 1 FROM soak_accepted a WHERE a.push_id = p.push_id)
            AND NOT EXISTS (SELECT 1 FROM schedule_firings f WHERE f.push_id = p.push_id)) AS "pushes queued that no 202 names",
       (SELECT count(*) FROM (SELECT 1 FROM delivery_outcomes WHERE status = 200 GROUP BY push_id, token HAVING count(*) > 1) twice)
           AS "tokens recorded twice for one push";
SQL
recorded=$(psql -tAq "$DATABASE_URL" -c "SELECT count(*) FROM delivery_outcomes WHERE status = 200")
echo "APNs accepted $accepted_by_apns, workers recorded $recorded: $((accepted_by_apns - recorded)) sent and not recorded (resent)"
registered=$(psql -tAq "$DATABASE_URL" -c "SELECT count(*) FROM channels WHERE app_id = 1" -c "SELECT count(*) FROM live_activities WHERE app_id = 1" |
    awk -v seeded=$((names * per_name)) '{n[NR] = $1 - seeded} END {printf "%d channels created, %d with their Live Activity", n[1], n[2]}')
stops=0
[ -f "$work/devices-stopped.txt" ] && stops=$(wc -l <"$work/devices-stopped.txt")
echo "registrations: $registered ($registrations/s for $seconds s: $((registrations * seconds))); simulate-devices stopped by a failed request $stops times"
tr '\r' '\n' <"$work/devices.log" | grep '^blimp:' | sed -E 's/[0-9a-f-]{36}/ID/g' | cut -c1-200 | sort | uniq -c | sort -rn | head -n 5 || true
echo "schedule answers: $(answers "$work/schedules.log")"
psql -q "$DATABASE_URL" <<SQL
\pset footer off
SELECT count(DISTINCT s.schedule_id) AS "schedules created", count(f.push_id) AS fired,
       count(f.skipped) AS "not sent (missed or refused)", count(DISTINCT s.schedule_id) - count(DISTINCT f.schedule_id) AS "not fired",
       round(max(extract(epoch FROM f.fired_at - (f.occurrence AT TIME ZONE 'UTC')))::numeric, 1) AS "latest firing, s after its time",
       count(*) FILTER (WHERE p.state IN ('done', 'superseded')) AS "their pushes finished",
       (SELECT count(*) - count(DISTINCT name) FROM schedules WHERE name LIKE 'soak %') AS "created twice"
FROM soak_schedules s LEFT JOIN schedule_firings f USING (schedule_id) LEFT JOIN pushes p ON p.push_id = f.push_id;
SQL
python3 - "$work" "$db_events" "$events_before" <<'PY'
import json, sys
work, db_events, before = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
def read(name):
    try:
        return json.load(open(f"{work}/{name}.json"))
    except (OSError, ValueError):
        return {}
console, events, hook = read("console"), read("events"), read("webhook")
by_status = "  ".join(f"{s} {n}" for s, n in sorted(console.get("statuses", {}).items()))
print(f"console reads: {by_status} (signed in {console.get('sign_ins', 0)} times)")
failed = {page: n for page, n in console.get("pages", {}).items() if not page.endswith(" 200")}
if failed:
    print("  not 200:", ", ".join(f"{page} × {n}" for page, n in sorted(failed.items())))
print(f"event stream: {events.get('events', 0)} events of {db_events} in the database, {events.get('repeats', 0)} repeated; "
      f"{max(0, events.get('connections', 0) - 1)} reconnects ({events.get('clean_ends', 0)} clean ends of the stream, "
      f"{events.get('errors', 0)} errors; answers {dict(sorted(events.get('statuses', {}).items()))})")
if events.get("last_error"):
    print(f"  last error: {events['last_error']}")
print(f"webhook: {hook.get('deliveries', 0)} deliveries, {hook.get('events', 0)} events of the {db_events - before} committed "
      f"after it was created, {hook.get('repeated_batches', 0)} batches ({hook.get('repeated_events', 0)} events) delivered again")
PY
curl -s -u "$app_key:$master_secret" -H 'Accept: application/vnd.urbanairship+json; version=3' "http://127.0.0.1:$api_port/api/webhooks" |
    python3 -c 'import json, sys
for w in json.load(sys.stdin)["webhooks"]:
    print("  Blimp: {delivered_events} events delivered, {backlog_events} in its backlog, enabled {enabled}, {failed_attempts} failed "
          "attempts in a row, last status {last_status}, last error {last_error}".format(**{k: w.get(k) for k in
          ("delivered_events", "backlog_events", "enabled", "failed_attempts", "last_status", "last_error")}))'
echo "warnings and errors in the logs (the most frequent of each):"
for log in api w1 w2 apns-sim load; do
    [ -s "$work/$log.log" ] || continue
    echo "  $log: $(grep -c ' warning ' "$work/$log.log" || true) warnings, $(grep -cE ' (error|critical) ' "$work/$log.log" || true) errors"
    grep -E ' (warning|error|critical) |Error|Traceback' "$work/$log.log" |
        sed -E 's/^[0-9T:+-]+ //; s/(app\.key|hb\.request\.id|push\.id|psql_connection_id)=[^ ]+ //g; s/[0-9]+/N/g' |
        cut -c1-200 | sort | uniq -c | sort -rn | head -n 3 | sed 's/^/    /' || true
done

echo
step=5
((minutes >= 30)) || step=1
echo "RSS in MB every $step min (faults: $(awk '{printf "%s%s at %s", sep, substr($0, index($0, " ") + 1), $1; sep = ", "}' "$faults")):"
printf '%6s %8s %8s %8s %8s %9s %9s\n' minute api w1 w2 apns-sim "api anon" "w2 anon"
awk -v step=$step '
    function row() { printf "%6.1f %8.1f %8.1f %8.1f %8.1f %9.1f %9.1f\n", $1, $2, $3, $4, $5, $6, $7 }
    $1 >= mark - 0.05 { row(); mark = (int($1 / step + 0.01) + 1) * step; shown = NR }
    END { if (shown != NR) row() }' "$samples"
python3 - "$samples" "$minutes" <<'PY'
import sys
samples = [[float(x) for x in line.split()] for line in open(sys.argv[1]) if line.strip()]
start, end = float(sys.argv[2]) / 3, samples[-1][0]
first = [s for s in samples if start <= s[0] < start + 1]
last = [s for s in samples if end - 1 < s[0] <= end]
mean = lambda rows, column: sum(r[column] for r in rows) / len(rows) if rows else float("nan")
print(f"growth from minute {start:.1f} to {end:.1f} (the mean of each end's minute of samples):")
for name, column, anonymous in (("api", 1, 5), ("w2", 3, 6)):
    growth = mean(last, column) - mean(first, column)
    print(f"  {name}: {mean(first, column):.1f} → {mean(last, column):.1f} MB, {growth:+.1f} MB: {'PASS' if growth < 5 else 'FAIL'}"
          f" (under 5 MB); anonymous {mean(first, anonymous):.1f} → {mean(last, anonymous):.1f} MB")
PY
plot=${SOAK_PLOT:-$work-memory.svg}
python3 bench/soak-plot.py "$samples" "$faults" "$plot"
echo "memory chart: $plot"
if [ -n "${SOAK_KEEP:-}" ]; then
    mkdir -p "$SOAK_KEEP"
    cp "$work"/*.log "$work"/*.txt "$work"/*.json "$SOAK_KEEP"/ 2>/dev/null || true
    cp "$work/pg/server.log" "$SOAK_KEEP/primary.log" 2>/dev/null || true
    cp "$standby/server.log" "$SOAK_KEEP/standby.log" 2>/dev/null || true
    echo "logs and samples: $SOAK_KEEP"
fi
