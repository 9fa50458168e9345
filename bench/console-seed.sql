-- Seeds one app for bench/console.sh, in bulk statements (psql variables: app = the app's id, n = its channel count).
-- Per app: n channels, a quarter with a named user (two channels each, named users tagged crm/tier-K), about 3.1
-- tags each over three groups (device: plan-(i % 7) and team-K; interests: interest-K; 10% loyalty/gold, 1%
-- device/beta), about 0.6·n Live Activities over 50 names (match-0 … match-49; 15% ended, of the active ones 29%
-- expired: started 8.5 to 11.5 hours ago; none started 7.5 to 8.5 hours ago, so which are expired stays the same for
-- half an hour), about 0.1·n push-to-start tokens, n/50 finished pushes over the last three days to those names (as
-- the intake and the workers write them), 75 delivery outcomes each (at most 3 per token, so the janitor's trim keeps
-- them all), the pushes' counts summed from those outcomes, and each name's last push. Every app gets the same
-- names, tags and named users: a query that leaves its app counts the other's rows. Ids and tokens are md5s of
-- (app, kind, i): the same for every run.
\set ON_ERROR_STOP on
-- Rows are consistent by construction: foreign keys are not checked row by row (a third of the load time).
SET session_replication_role = replica;
\set per_push 75
SELECT (:n / 50)::int AS pushes \gset

-- A uniform number in [0, 2^31) for (i, salt), and a 64-hex token for a seed text.
CREATE FUNCTION pg_temp.h(i bigint, salt int) RETURNS int LANGUAGE sql IMMUTABLE
    AS 'SELECT hashint8(i + (salt::bigint << 32)) & 2147483647';
CREATE FUNCTION pg_temp.hex64(seed text) RETURNS text LANGUAGE sql IMMUTABLE
    AS 'SELECT md5(''a'' || seed) || md5(''b'' || seed)';

INSERT INTO named_users (app_id, named_user_id, created_at, updated_at)
SELECT :app, 'user-' || u, now() - pg_temp.h(u, 20) % 7776000 * interval '1 second', now()
FROM generate_series(0, :n / 8) u;

INSERT INTO named_user_tags (app_id, tag_group, tag, named_user_id)
SELECT :app, 'crm', 'tier-' || u % 3, 'user-' || u FROM generate_series(0, :n / 8) u;

INSERT INTO channels (app_id, channel_id, push_address, opt_in, background, installed, frequent_pushes_enabled,
                      named_user_id, timezone, locale_language, locale_country, attributes, created_at, last_registration)
SELECT :app, md5(:app || '/c/' || i)::uuid,
       CASE WHEN pg_temp.h(i, 1) % 10 < 9 THEN pg_temp.hex64(:app || '/p/' || i) END,
       pg_temp.h(i, 1) % 10 < 8 AND pg_temp.h(i, 2) % 50 <> 0,
       pg_temp.h(i, 2) % 50 <> 0, pg_temp.h(i, 2) % 50 <> 0, pg_temp.h(i, 3) % 20 = 0,
       CASE WHEN i % 4 = 0 THEN 'user-' || i / 8 END,
       (ARRAY['America/New_York', 'Europe/London', 'Europe/Berlin', 'Asia/Tokyo', 'Australia/Sydney'])[1 + i % 5],
       (ARRAY['en', 'en', 'de', 'ja', 'en'])[1 + i % 5],
       (ARRAY['US', 'GB', 'DE', 'JP', 'AU'])[1 + i % 5],
       jsonb_build_object('plan', 'plan-' || i % 7, 'app_version', '4.' || pg_temp.h(i, 4) % 12 || '.0',
                          'favorite_team', 'team-' || pg_temp.h(i, 5) % 40),
       now() - pg_temp.h(i, 6) % 7776000 * interval '1 second',
       now() - pg_temp.h(i, 7) % 2592000 * interval '1 second'
FROM generate_series(1, :n) i
ORDER BY 2;

INSERT INTO channel_tags (app_id, tag_group, tag, channel_id)
SELECT :app, v.tag_group, v.tag, md5(:app || '/c/' || i)::uuid
FROM generate_series(1, :n) i,
     LATERAL (VALUES ('device', 'plan-' || i % 7),
                     ('device', 'team-' || pg_temp.h(i, 5) % 40),
                     ('interests', 'interest-' || pg_temp.h(i, 8) % 25),
                     ('loyalty', CASE WHEN pg_temp.h(i, 9) % 10 = 0 THEN 'gold' END),
                     ('device', CASE WHEN pg_temp.h(i, 10) % 100 = 0 THEN 'beta' END)) AS v (tag_group, tag)
WHERE v.tag IS NOT NULL
ORDER BY 4;

-- Started up to 11.5 hours ago (the janitor forgets them at 12), skipping 7.5 to 8.5 hours ago.
INSERT INTO live_activities (app_id, channel_id, name, activity_id, token, state, started_at, action_ts_ms, ended_at,
                             dismiss_at, updated_at)
SELECT :app, channel_id, name, activity_id, token, state, started_at, (extract(epoch FROM started_at) * 1000)::bigint,
       CASE WHEN state = 'ended' THEN started_at + (now() - started_at) / 2 END,
       CASE WHEN state = 'ended' THEN now() + interval '1 hour' + pg_temp.h(i, 15) % 10800 * interval '1 second' END,
       CASE WHEN state = 'ended' THEN started_at + (now() - started_at) / 2 ELSE started_at END
FROM (SELECT i, md5(:app || '/c/' || i)::uuid AS channel_id, 'match-' || pg_temp.h(i, 11) % 50 AS name,
             upper(md5(:app || '/a/' || i)::uuid::text) AS activity_id, pg_temp.hex64(:app || '/t/' || i) AS token,
             CASE WHEN pg_temp.h(i, 12) % 100 < 15 THEN 'ended' ELSE 'active' END AS state,
             now() - (o + CASE WHEN o >= 27000 THEN 3600 ELSE 0 END) * interval '1 second' AS started_at
      FROM generate_series(1, :n) i, LATERAL (SELECT pg_temp.h(i, 13) % 37800 AS o) x
      WHERE pg_temp.h(i, 14) % 10 < 6) a
ORDER BY channel_id;

INSERT INTO push_to_start_tokens (app_id, channel_id, attributes_type, token, action_ts_ms, updated_at)
SELECT :app, md5(:app || '/c/' || i)::uuid, 'MatchAttributes', pg_temp.hex64(:app || '/s/' || i),
       (extract(epoch FROM now()) * 1000)::bigint - pg_temp.h(i, 17) % 86400000, now()
FROM generate_series(1, :n) i
WHERE pg_temp.h(i, 16) % 10 = 0
ORDER BY 2;

-- The pushes: one every 3 days / pushes, to match-(p % 50); 4% starts, 4% ends, the rest updates, 10% of them with
-- an alert; audiences all (half), a plan tag, a named user, or a team tag without beta devices.
CREATE TEMP TABLE seeded_pushes AS
SELECT p, name, q, push_id, operation_id, accepted_at, floor(extract(epoch FROM accepted_at))::bigint AS aps_timestamp,
       event, audience, priority, content_state, alert,
       event <> 'update' OR alert IS NOT NULL AS alerting
FROM (SELECT p, 'match-' || p % 50 AS name, p / 50 AS q, md5(:app || '/push/' || p)::uuid AS push_id,
             md5(:app || '/operation/' || p)::uuid AS operation_id,
             now() - interval '1 minute' - (:pushes - p) * (interval '3 days' / :pushes) AS accepted_at,
             CASE pg_temp.h(p, 21) % 25 WHEN 0 THEN 'start' WHEN 1 THEN 'end' ELSE 'update' END AS event,
             CASE WHEN pg_temp.h(p, 22) % 10 < 5 THEN '"all"'::jsonb
                  WHEN pg_temp.h(p, 22) % 10 < 8 THEN jsonb_build_object('tag', 'plan-' || p % 7, 'group', 'device')
                  WHEN pg_temp.h(p, 22) % 10 < 9 THEN jsonb_build_object('named_user', 'user-' || pg_temp.h(p, 23) % 1000)
                  ELSE jsonb_build_object('and', jsonb_build_array(
                           jsonb_build_object('tag', 'team-' || p % 40, 'group', 'device'),
                           jsonb_build_object('not', jsonb_build_object('tag', 'beta', 'group', 'device'))))
             END AS audience,
             CASE WHEN pg_temp.h(p, 21) % 25 < 2 OR pg_temp.h(p, 24) % 5 = 0 THEN 10 ELSE 5 END AS priority,
             jsonb_build_object('home', p / 50 % 5, 'away', p / 150 % 4, 'minute', p / 50 % 90) AS content_state,
             CASE WHEN pg_temp.h(p, 21) % 25 < 2 OR pg_temp.h(p, 25) % 10 = 0
                  THEN jsonb_build_object('title', 'Match ' || p % 50, 'body', 'Score ' || p / 50 % 5 || '-' || p / 150 % 4)
             END AS alert
      FROM generate_series(1, :pushes) p) s;

-- Tokens of each name in a fixed order, for the outcomes.
CREATE TEMP TABLE name_tokens AS
SELECT name, (row_number() OVER (PARTITION BY name ORDER BY channel_id) - 1)::int AS k, channel_id, token
FROM live_activities WHERE app_id = :app;
CREATE TEMP TABLE name_sizes AS SELECT name, count(*)::int AS total FROM name_tokens GROUP BY name;
ANALYZE name_tokens;

-- Push q of a name reaches that name's tokens q·75 … q·75 + 74 (modulo its count): 97% accepted, then
-- Unregistered, BadDeviceToken, and no answer.
INSERT INTO delivery_outcomes (app_id, push_id, token, channel_id, status, reason, apns_id, priority, sent_at)
SELECT :app, sp.push_id, t.token, t.channel_id, o.status, o.reason,
       CASE WHEN o.status <> 0 THEN md5(:app || '/apns/' || sp.p || '/' || j)::uuid END, sp.priority,
       sp.accepted_at + interval '200 milliseconds' + j * interval '2 milliseconds'
FROM seeded_pushes sp
JOIN name_sizes ns ON ns.name = sp.name
CROSS JOIN generate_series(0, :per_push - 1) j
JOIN name_tokens t ON t.name = sp.name AND t.k = (sp.q * :per_push + j) % ns.total
CROSS JOIN LATERAL (SELECT pg_temp.h(sp.p * 1000 + j, 26) % 1000 AS r) x
CROSS JOIN LATERAL (SELECT CASE WHEN r < 970 THEN 200 WHEN r < 985 THEN 410 WHEN r < 995 THEN 400 ELSE 0 END::smallint AS status,
                           CASE WHEN r < 970 THEN NULL WHEN r < 985 THEN 'Unregistered' WHEN r < 995 THEN 'BadDeviceToken' END AS reason) o
ORDER BY sp.accepted_at, j;

-- Counts as PushCounts.json writes them, from the outcomes.
CREATE TEMP TABLE seeded_counts AS
WITH reasons AS (
    SELECT push_id, coalesce(reason, CASE WHEN status = 0 THEN 'no_response' ELSE 'status_' || status END) AS reason,
           count(*) AS n, count(*) FILTER (WHERE status = 410) AS pruned
    FROM delivery_outcomes WHERE app_id = :app AND status <> 200 GROUP BY 1, 2),
failed AS (SELECT push_id, jsonb_object_agg(reason, n) AS failed, sum(pruned)::int AS pruned FROM reasons GROUP BY 1),
totals AS (SELECT push_id, count(*)::int AS targets, count(*) FILTER (WHERE status = 200)::int AS sent
           FROM delivery_outcomes WHERE app_id = :app GROUP BY 1)
SELECT sp.push_id,
       jsonb_build_object('targets', coalesce(t.targets, 0), 'sent', coalesce(t.sent, 0),
                          'failed', coalesce(f.failed, '{}'), 'downgraded_priority', 0,
                          'skipped_ended', CASE WHEN sp.event = 'update' THEN pg_temp.h(sp.p, 27) % 40 ELSE 0 END,
                          'skipped_already_active', 0, 'skipped_start_budget', 0, 'superseded', 0,
                          'tokens_pruned', coalesce(f.pruned, 0)) AS counts
FROM seeded_pushes sp LEFT JOIN totals t USING (push_id) LEFT JOIN failed f USING (push_id);

INSERT INTO pushes (app_id, push_id, operation_id, state, kind, activity_name, event, aps_timestamp, audience, payload,
                    accepted_at, not_before, claimed_by, attempts, counts, started_at, finished_at, apns_body, push_type,
                    priority, collapse_id, expires_at, attributes_type, alerting, dismissal_date)
SELECT :app, sp.push_id, sp.operation_id, 'done', 'live_activity', sp.name, sp.event, sp.aps_timestamp, sp.audience,
       jsonb_build_object('audience', sp.audience, 'device_types', '["ios"]'::jsonb, 'notification',
           jsonb_build_object('ios', jsonb_build_object('live_activity',
               jsonb_strip_nulls(jsonb_build_object(
                   'event', sp.event, 'name', sp.name, 'priority', sp.priority, 'content_state', sp.content_state,
                   'alert', sp.alert,
                   'attributes_type', CASE WHEN sp.event = 'start' THEN 'MatchAttributes' END,
                   'attributes', CASE WHEN sp.event = 'start' THEN jsonb_build_object('home_team', 'Home ' || sp.p % 50, 'away_team', 'Away ' || sp.p % 50) END,
                   'dismissal_date', CASE WHEN sp.event = 'end' THEN to_char((sp.accepted_at + interval '1 hour') AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') END))))),
       sp.accepted_at, sp.accepted_at, 'worker-bench', 1, c.counts, sp.accepted_at + interval '150 milliseconds',
       sp.accepted_at + interval '400 milliseconds',
       format('{"aps":{"timestamp":%s,"event":"%s","content-state":%s%s%s%s}}', sp.aps_timestamp, sp.event,
              format('{"home":%s,"away":%s,"minute":%s}', sp.content_state -> 'home', sp.content_state -> 'away', sp.content_state -> 'minute'),
              CASE WHEN sp.alert IS NOT NULL THEN format(',"alert":{"title":"%s","body":"%s"}', sp.alert ->> 'title', sp.alert ->> 'body') ELSE '' END,
              CASE WHEN sp.event = 'start' THEN format(',"attributes-type":"MatchAttributes","attributes":{"home_team":"Home %s","away_team":"Away %s"}', sp.p % 50, sp.p % 50) ELSE '' END,
              CASE WHEN sp.event = 'end' THEN format(',"dismissal-date":%s', sp.aps_timestamp + 3600) ELSE '' END),
       'liveactivity', sp.priority, NULL, NULL, CASE WHEN sp.event = 'start' THEN 'MatchAttributes' END, sp.alerting,
       CASE WHEN sp.event = 'end' THEN sp.accepted_at + interval '1 hour' END
FROM seeded_pushes sp JOIN seeded_counts c USING (push_id)
ORDER BY sp.accepted_at;

INSERT INTO push_parts (app_id, push_id, part, after_channel_id, through_channel_id, cursor_channel_id, state, claimed_by,
                        counts, accepted_at)
SELECT :app, c.push_id, 0, '00000000-0000-0000-0000-000000000000', 'ffffffff-ffff-ffff-ffff-ffffffffffff',
       'ffffffff-ffff-ffff-ffff-ffffffffffff', 'done', 'worker-bench', c.counts, sp.accepted_at
FROM seeded_counts c JOIN seeded_pushes sp USING (push_id);

INSERT INTO activity_names (app_id, name, last_timestamp, last_push_id)
SELECT DISTINCT ON (name) :app, name, aps_timestamp, push_id FROM seeded_pushes ORDER BY name, p DESC;

-- The console's chart (schema version 10 on): sends per minute by status over the last two hours, as the workers'
-- checkpoints add them.
SELECT to_regclass('send_tallies') IS NOT NULL AS has_tallies \gset
\if :has_tallies
INSERT INTO send_tallies (app_id, minute, status, sends)
SELECT :app, date_trunc('minute', now()) - m * interval '1 minute', s.status,
       greatest(1, (:n / 400 + pg_temp.h(m, 28) % (:n / 400 + 1)) * s.share / 1000)
FROM generate_series(0, 119) m, (VALUES (200, 970), (410, 15), (400, 10), (0, 5)) AS s (status, share);
\endif

DROP TABLE seeded_pushes, seeded_counts, name_tokens, name_sizes;
