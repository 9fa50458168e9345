#!/usr/bin/env bash
# Table sizes per channel: seeds one app with CHANNELS channels by bench/console-seed.sql (the data bench/console.sh
# uses: named users, tags, Live Activities, push-to-start tokens, finished pushes with their delivery outcomes) and
# 2·CHANNELS nonces (what as many devices leave for 24 hours, two signed requests each), runs VACUUM ANALYZE, and
# prints each table's rows, heap (with TOAST), indexes and total, bytes per row and per channel, the largest indexes
# and the database's size. Sizes depend on the data, not on the machine's speed, so this runs on a busy machine too.
# Results go in docs/scaling.md.
#
#   bench/table-sizes.sh [CHANNELS=1000000]
#
# Any build of `blimp` (it only migrates and creates the app): BLIMP=.build/debug/blimp skips the release build.
set -euo pipefail
cd "$(dirname "$0")/.."
channels=${1:-1000000}
source bench/setup.sh
app_id=$(psql -qtAX "$DATABASE_URL" -c "SELECT id FROM apps WHERE app_key = '$(field app_key)'")

echo "table sizes: $channels channels in one app; $postgres_line"
start=$(date +%s)
psql -qX "$DATABASE_URL" -v app="$app_id" -v n="$channels" -f bench/console-seed.sql
psql -qX "$DATABASE_URL" -c "INSERT INTO used_nonces SELECT $app_id, gen_random_uuid(), now() + random() * interval '24 hours'
                             FROM generate_series(1, 2 * $channels)"
psql -qX "$DATABASE_URL" -c "VACUUM ANALYZE"
echo "seeded in $(($(date +%s) - start)) s"
psql -qX "$DATABASE_URL" -v n="$channels" <<'SQL'
CREATE TEMP TABLE sizes (name text, rows bigint, heap bigint, indexes bigint, total bigint);
SELECT format('INSERT INTO sizes SELECT %L, (SELECT count(*) FROM %I), pg_table_size(%L), pg_indexes_size(%L), pg_total_relation_size(%L)',
              c.relname, c.relname, c.oid, c.oid, c.oid)
FROM pg_class c JOIN pg_namespace s ON s.oid = c.relnamespace
WHERE s.nspname = 'public' AND c.relkind = 'r' \gexec
SELECT s.name AS "table", s.rows, pg_size_pretty(s.heap) AS heap, pg_size_pretty(s.indexes) AS indexes,
       pg_size_pretty(s.total) AS total, CASE WHEN s.rows > 0 THEN round(s.total::numeric / s.rows) END AS "bytes/row",
       round(s.total::numeric / :n) AS "bytes/channel"
FROM sizes s ORDER BY s.total DESC, s.name;
SELECT i.indrelid::regclass AS "table", i.indexrelid::regclass AS index, pg_size_pretty(pg_relation_size(i.indexrelid)) AS size
FROM pg_index i JOIN pg_class c ON c.oid = i.indrelid JOIN pg_namespace s ON s.oid = c.relnamespace
WHERE s.nspname = 'public' AND pg_relation_size(i.indexrelid) >= :n * 8
ORDER BY pg_relation_size(i.indexrelid) DESC;
SELECT pg_size_pretty(sum(total)) AS "all tables", round(sum(total) / :n) AS "bytes/channel",
       pg_size_pretty(pg_database_size(current_database())) AS database
FROM sizes;
SQL
