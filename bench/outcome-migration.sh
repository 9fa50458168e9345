#!/usr/bin/env bash
# The upgrade to day-partitioned delivery outcomes on a large table. Builds the previous version's schema (schema.sql
# up to "delivery outcomes by time"), fills its unpartitioned delivery_outcomes with ROWS outcomes spread evenly over
# the last DAYS days (three apps, 200,000 channels, a push per 5,000 rows), then runs `blimp migrate` while pgbench
# records outcomes as a worker's checkpoint does (a 100-row insert, 20 a second). Prints each new version's time and
# the slowest insert meanwhile (the time it waited for the migration's locks), then runs `blimp api` until its janitor
# has moved the outcomes within seven days into the partitioned table and dropped the old one (or ROUNDS rounds,
# a minute apart), printing each round's moves.
#
#   bench/outcome-migration.sh [ROWS=10000000] [DAYS=10] [ROUNDS=60]
#
# Any build of `blimp` (PostgreSQL does the work): BLIMP=.build/debug/blimp skips the release build. A throwaway
# PostgreSQL with its default settings (fsync on). Results go in docs/scaling.md and docs/operations.md.
set -euo pipefail
cd "$(dirname "$0")/.."
rows=${1:-10000000}
days=${2:-10}
rounds=${3:-60}
source bench/cluster.sh
bin=$(postgres_bindir)
sql() { psql -qtAX "$DATABASE_URL" -c "$1"; }
now() { date +%s.%N; }
seconds() { python3 -c "print(f'{$2 - $1:.1f}')"; }

# The previous version: schema.sql up to the first new version, applied statement by statement, and recorded.
first_new=$(grep -n '^-- version [0-9]*, no transaction: delivery outcomes by time' schema.sql | cut -d: -f1)
head -n $((first_new - 1)) schema.sql >"$work/previous.sql"
psql -qX -v ON_ERROR_STOP=1 "$DATABASE_URL" -f "$work/previous.sql" 2>&1 | grep -v NOTICE || true
sql "CREATE TABLE schema_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())"
sql "INSERT INTO schema_migrations (version, name) VALUES (1, 'baseline')"
sed -nE 's/^-- version ([0-9]+)(, no transaction)?: (.*)$/\1\t\3/p' "$work/previous.sql" | while IFS=$'\t' read -r version name; do
    sql "INSERT INTO schema_migrations (version, name) VALUES ($version, \$\$${name}\$\$)"
done
previous=$(sql "SELECT max(version) FROM schema_migrations")
for app in 1 2 3; do
    sql "INSERT INTO apps (app_key, name, bundle_id, app_secret_sha256, master_secret_sha256, apns_key_id, apns_team_id,
                           apns_environment, apns_key_sealed)
         VALUES ('benchapp${app}xxxxxxxxxxxxx', 'bench$app', 'com.example.bench', '\\x00', '\\x00', 'KEY', 'TEAM', 'sandbox', '\\x00')"
done

echo "outcome migration: $rows outcomes over $days days at version $previous; PostgreSQL $("$bin/postgres" --version | awk '{print $3}') with fsync on; $(nproc) cores"
start=$(now)
sql "INSERT INTO delivery_outcomes (app_id, push_id, token, channel_id, status, apns_id, priority, sent_at)
     SELECT 1 + (i % 7 = 0)::int + (i % 11 = 0)::int, md5('p' || (i / 5000))::uuid, md5((i % 200000)::text) || md5((i % 200000)::text),
            md5('c' || (i % 200000))::uuid, CASE WHEN i % 50 = 0 THEN 410 ELSE 200 END, gen_random_uuid(), 10,
            now() - ($rows - i) * interval '$days days' / $rows
     FROM generate_series(1, $rows) i"
sql "VACUUM ANALYZE delivery_outcomes"
echo "seeding: $(seconds "$start" "$(now)") s; table $(sql "SELECT pg_size_pretty(pg_total_relation_size('delivery_outcomes'))") with its indexes"

# A worker's checkpoints meanwhile: 100 outcomes per insert, 20 inserts a second, each insert's latency logged.
cat >"$work/checkpoint.sql" <<'EOF'
INSERT INTO delivery_outcomes (app_id, push_id, token, channel_id, status, priority, sent_at)
SELECT 1, gen_random_uuid(), md5(i::text) || md5(i::text), gen_random_uuid(), 200, 10, now() FROM generate_series(1, 100) i;
EOF
(cd "$work" && exec "$bin/pgbench" -n -c 1 -R 20 -T 100000 -f checkpoint.sql -l --log-prefix=checkpoints "$DATABASE_URL" >/dev/null 2>&1) &
pgbench=$!
pids+=($pgbench)
sleep 3
start=$(now)
"$blimp" migrate --log-level info 2>"$work/migrate.log" >/dev/null
end=$(now)
sleep 3
kill -TERM "$pgbench"
wait "$pgbench" 2>/dev/null || true
sql "SELECT version, name, applied_at FROM schema_migrations WHERE version > $previous ORDER BY version" >"$work/applied"
index_done=$(sql "SELECT extract(epoch FROM applied_at) FROM schema_migrations WHERE version = $previous + 1")
echo "blimp migrate: $(seconds "$start" "$end") s: the index by time (online) $(seconds "$start" "$index_done") s, the rest (the rename, the partitioned table, the last two hours moved) $(seconds "$index_done" "$end") s"
echo "moved at once: $(sql "SELECT count(*) FROM delivery_outcomes WHERE sent_at < to_timestamp($start)") outcomes; left to the janitor: $(sql "SELECT count(*) FROM delivery_outcomes_unpartitioned")"
cat "$work"/checkpoints* | python3 -c '
import sys
rows = [line.split() for line in sys.stdin]
latency = [int(r[2]) / 1000 for r in rows]
waited = [(int(r[2]) + int(r[6])) / 1000 for r in rows if len(r) > 6]
print(f"checkpoint inserts meanwhile: {len(rows)}, slowest {max(latency):.0f} ms (with its wait to start {max(waited):.0f} ms), median {sorted(latency)[len(latency) // 2]:.1f} ms")'

# The janitor drains the old table: seven days' outcomes moved, the rest dropped with it.
export BLIMP_SECRET_KEY=$(openssl rand -base64 32)
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$blimp" api --port "$port" --log-level info --log-format json >"$work/api.log" 2>&1 &
pids+=($!)
start=$(now)
for round in $(seq "$rounds"); do
    sleep 60
    [ "$(sql "SELECT to_regclass('delivery_outcomes_unpartitioned') IS NULL")" = t ] && break
done
end=$(now)
python3 - "$work/api.log" <<'EOF'
import json, sys
moved = rounds = 0
for line in open(sys.argv[1]):
    try: entry = json.loads(line)
    except ValueError: continue
    message = entry.get("message", "")
    if "moved into partitions" in message:
        moved, rounds = moved + int(entry["count"]), rounds + 1
    if "moved into partitions" in message or "drained and dropped" in message or "partitions created" in message or "partition dropped" in message:
        print(entry.get("time", ""), message, {k: v for k, v in entry.items() if k not in ("time", "message", "level", "label", "source")})
print(f"moved by the janitor: {moved} outcomes in {rounds} rounds")
EOF
echo "janitor: $(seconds "$start" "$end") s; old table $(sql "SELECT CASE WHEN to_regclass('delivery_outcomes_unpartitioned') IS NULL THEN 'dropped' ELSE 'still there' END");" \
    "$(sql "SELECT count(*) FROM delivery_outcomes") outcomes in $(sql "SELECT count(*) FROM pg_inherits WHERE inhparent = 'delivery_outcomes'::regclass") partitions" \
    "($(sql "SELECT count(*) FROM delivery_outcomes_default") in the DEFAULT one)"
