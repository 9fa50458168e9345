#!/usr/bin/env bash
# Retention at scale: fills a throwaway database with PUSHES pushes (one part each, accepted over the last 40 days and
# finished a minute later; those of the last 10 minutes still queued) and OUTCOMES delivery outcomes (over the last 35
# days), across four apps, one of which keeps its pushes 60 days (`blimp apps retention`), PUSHES/5 audit entries
# over 400 days, and EVENTS events of the event stream over the last 14 days (half of them past the default 7 days),
# in offset order as they are written; then runs a real `blimp api` whose janitor runs every JANITOR seconds (a round may spend a third of
# it) with the default retentions (pushes 30d, outcomes 7d, audit 365d, events 7d), for ROUNDS rounds. Prints the tables' rows
# before and after, and per round and chore the rows deleted and the seconds, against the round's budget (from the
# janitor's JSON log lines). Figures go in docs/performance.md and docs/scaling.md.
#
#   bench/retention.sh [PUSHES=5000000] [OUTCOMES=50000000] [ROUNDS=6] [JANITOR=30] [EVENTS=0]
#
# The janitor's work is SQL, so any build of `blimp` measures the same: BLIMP=.build/debug/blimp skips the release
# build.
set -euo pipefail
cd "$(dirname "$0")/.."
pushes=${1:-5000000} outcomes=${2:-50000000} rounds=${3:-6} janitor=${4:-30} events=${5:-0}
source bench/setup.sh
for name in orders news; do
    "$blimp" apps create --name "$name" --bundle-id "com.example.$name" --apns-key-file "$work/key.p8" \
        --apns-key-id $kid --apns-team-id $team --apns-environment sandbox >/dev/null
done
weather=$("$blimp" apps create --name weather --bundle-id com.example.weather --apns-key-file "$work/key.p8" \
    --apns-key-id $kid --apns-team-id $team --apns-environment sandbox | python3 -c 'import json,sys; print(json.load(sys.stdin)["app_key"])')
"$blimp" apps retention --app-key "$weather" --pushes 60d >/dev/null

echo "retention: $pushes pushes, $outcomes delivery outcomes, $((pushes / 5)) audit entries, $events events in 4 apps; janitor every ${janitor} s; $postgres_line"
start=$(date +%s)
chunk=1000000
for ((from = 1; from <= pushes; from += chunk)); do
    to=$((from + chunk - 1 < pushes ? from + chunk - 1 : pushes))
    # A push id is a UUIDv7 of its acceptance: 48 bits of Unix milliseconds, the version, the variant, hex of md5 as the rest.
    psql -qX "$DATABASE_URL" -v from=$from -v to=$to -v n="$pushes" <<'SQL'
WITH apps AS (SELECT array_agg(id ORDER BY id) AS ids FROM apps),
seeded AS (
    SELECT i, now() - interval '40 days' * (1 - i::float8 / :n) AS t, md5(i::text) AS h FROM generate_series(:from, :to) i)
INSERT INTO pushes (app_id, push_id, operation_id, state, kind, audience, payload, accepted_at, not_before, started_at, finished_at)
SELECT apps.ids[1 + i % 4],
       (lpad(to_hex((extract(epoch FROM t) * 1000)::bigint), 12, '0') || '7' || substr(h, 1, 3) || '8' || substr(h, 4, 15))::uuid,
       h::uuid, CASE WHEN t > now() - interval '10 minutes' THEN 'queued' ELSE 'done' END, 'alert', '"all"',
       '{"audience": "all", "device_types": ["ios"], "notification": {"alert": "hi"}}', t, t,
       CASE WHEN t > now() - interval '10 minutes' THEN NULL ELSE t END,
       CASE WHEN t > now() - interval '10 minutes' THEN NULL ELSE t + interval '1 minute' END
FROM seeded, apps;
SQL
done
psql -qX "$DATABASE_URL" <<'SQL'
INSERT INTO push_parts (app_id, push_id, part, after_channel_id, through_channel_id, cursor_channel_id, state, accepted_at)
SELECT app_id, push_id, 0, '00000000-0000-0000-0000-000000000000', 'ffffffff-ffff-ffff-ffff-ffffffffffff',
       'ffffffff-ffff-ffff-ffff-ffffffffffff', state, accepted_at
FROM pushes;
-- The days' partitions a running janitor would have made (the upgrade's partition holds yesterday to tomorrow).
SELECT format('CREATE TABLE delivery_outcomes_%s PARTITION OF delivery_outcomes FOR VALUES FROM (%L) TO (%L)',
              to_char(d, 'YYYYMMDD'), d, d + interval '1 day')
FROM generate_series(date_trunc('day', now(), 'UTC') - interval '36 days', date_trunc('day', now(), 'UTC') - interval '2 days',
                     interval '1 day') d \gexec
-- Built after the rows, as a restore would: the same indexes as the schema's.
DROP INDEX delivery_outcomes_by_channel;
DROP INDEX delivery_outcomes_by_push;
SQL
echo "pushes and parts in $(($(date +%s) - start)) s"
chunk=5000000
for ((from = 1; from <= outcomes; from += chunk)); do
    to=$((from + chunk - 1 < outcomes ? from + chunk - 1 : outcomes))
    # 200,000 devices, each token 64 hex digits, outcomes spread over 35 days.
    psql -qX "$DATABASE_URL" -v from=$from -v to=$to <<'SQL'
WITH apps AS (SELECT array_agg(id ORDER BY id) AS ids FROM apps)
INSERT INTO delivery_outcomes (app_id, push_id, token, channel_id, status, priority, sent_at)
SELECT apps.ids[1 + i % 4], md5((i / 1000)::text)::uuid, md5((i % 200000)::text) || md5((i % 200000)::text || 't'),
       md5((i % 200000)::text)::uuid, 200, 10, now() - interval '35 days' * random()
FROM generate_series(:from, :to) i, apps;
SQL
done
chunk=2000000
for ((from = 1; from <= events; from += chunk)); do
    to=$((from + chunk - 1 < events ? from + chunk - 1 : events))
    # SENDs of 200,000 devices, each chunk one transaction (one xid), its rows in the order they occurred.
    psql -qX "$DATABASE_URL" -v from=$from -v to=$to -v n="$events" <<'SQL'
WITH apps AS (SELECT array_agg(id ORDER BY id) AS ids FROM apps)
INSERT INTO events (app_id, type, occurred_at, channel_id, push_id)
SELECT apps.ids[1 + i % 4], 'SEND', now() - interval '14 days' * (1 - i::float8 / :n), md5((i % 200000)::text)::uuid,
       md5((i / 1000)::text)::uuid
FROM generate_series(:from, :to) i, apps ORDER BY i;
SQL
done
psql -qX "$DATABASE_URL" -v n=$((pushes / 5)) <<'SQL'
CREATE INDEX delivery_outcomes_by_channel ON delivery_outcomes (app_id, channel_id, sent_at DESC);
CREATE INDEX delivery_outcomes_by_push ON delivery_outcomes (app_id, push_id);
WITH apps AS (SELECT array_agg(id ORDER BY id) AS ids FROM apps)
INSERT INTO audit_events (app_id, at, actor_kind, action, subject)
SELECT apps.ids[1 + i % 4], now() - interval '400 days' * random(), 'command_line', 'push.accepted', 'bench'
FROM generate_series(1, :n) i, apps;
VACUUM ANALYZE;
SQL
echo "seeded in $(($(date +%s) - start)) s"

sizes() {
    psql -qX "$DATABASE_URL" <<'SQL'
SELECT t AS "table", to_char(n, 'FM999,999,999') AS rows,
       -- A partitioned table's size is its partitions'.
       pg_size_pretty(coalesce((SELECT sum(pg_total_relation_size(relid)) FROM pg_partition_tree(t::regclass)), pg_total_relation_size(t))) AS "with indexes"
FROM (VALUES ('pushes', (SELECT count(*) FROM pushes)), ('push_parts', (SELECT count(*) FROM push_parts)),
             ('delivery_outcomes', (SELECT count(*) FROM delivery_outcomes)), ('audit_events', (SELECT count(*) FROM audit_events)),
             ('events', (SELECT count(*) FROM events))) AS v (t, n);
SQL
}
echo "before:"
sizes

port=$(loopback_ports 1)
"$blimp" api --port "$port" --janitor-seconds "$janitor" --log-format json --log-level info 2>"$work/api.log" &
pids+=($!)
deadline=$(($(date +%s) + rounds * janitor * 4 + 1800))
while [ "$(grep -c "the janitor's round ended" "$work/api.log" || true)" -lt "$rounds" ] && [ "$(date +%s)" -lt "$deadline" ]; do sleep 2; done
kill "${pids[-1]}" && wait "${pids[-1]}" || true

echo "after $rounds rounds:"
sizes
python3 - "$work/api.log" <<'PY'
import json, sys
rounds, chores = [], []
for line in open(sys.argv[1]):
    try:
        entry = json.loads(line)
    except ValueError:
        continue
    message = entry.get("message", "")
    if message == "the janitor's round ended":
        rounds.append((chores, entry["seconds"], entry["budget"]))
        chores = []
    elif "count" in entry and "seconds" in entry:
        chores.append((message, int(entry["count"]), entry["seconds"]))
print(f"{'round':>5}  {'chore':<45} {'rows':>10} {'seconds':>8}")
for number, (done, seconds, budget) in enumerate(rounds, 1):
    for message, count, took in done:
        print(f"{number:>5}  {message:<45} {count:>10,} {float(took):>8.2f}")
    print(f"{number:>5}  {'(round; budget ' + budget + ' s)':<45} {'':>10} {float(seconds):>8.2f}")
PY
