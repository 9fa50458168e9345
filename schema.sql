-- Blimp's whole schema, in versions. `blimp migrate` applies each version once, in its own transaction,
-- and records it in schema_migrations. Version 1 (up to the first `-- version N: name` line) is the
-- schema from before versions were recorded: its statements are idempotent, so such a database takes it
-- again harmlessly. A version marked `-- version N, no transaction: name` runs its statements one at a
-- time instead (for CREATE INDEX CONCURRENTLY); they must be safe to run again after a failure midway.
-- Every later version must be safe to apply while the previous release still serves: add columns
-- nullable or with a default, add CHECKs NOT VALID, build indexes on large tables concurrently, and
-- never drop or rename what the previous release reads (remove it one release later).
--
-- Every tenant row carries its app_id and every index on tenant rows leads with it, so one app's
-- traffic never scans another's. Statements end with `;` at the end of a line and contain no
-- `$$` bodies: the migrator splits the file there.

-- Apps (tenants): one iOS bundle id with its APNs credentials. Secrets are stored as SHA-256
-- digests; the .p8 key is sealed with AES-256-GCM under BLIMP_SECRET_KEY, bound to the app key.
CREATE TABLE IF NOT EXISTS apps (
    id                   bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    app_key              text NOT NULL UNIQUE CHECK (app_key ~ '^[A-Za-z0-9_-]{22}$'),
    name                 text NOT NULL UNIQUE,
    bundle_id            text NOT NULL,
    app_secret_sha256    bytea NOT NULL,
    master_secret_sha256 bytea NOT NULL,
    apns_key_id          text NOT NULL,
    apns_team_id         text NOT NULL,
    apns_environment     text NOT NULL CHECK (apns_environment IN ('sandbox', 'production')),
    apns_key_sealed      bytea NOT NULL,
    created_at           timestamptz NOT NULL DEFAULT now()
);
-- The app secret itself, sealed like the .p8 key: the SDK signs its requests with it (HMAC-SHA256), so the
-- server needs it, not only its digest. Apps created before this column have none and authenticate with Basic.
ALTER TABLE apps ADD COLUMN IF NOT EXISTS app_secret_sealed bytea;
-- The app's Live Activity budgets (PriorityBudget): priority-10 pushes per token per hour, for channels that
-- allow frequent updates, and push-to-start pushes per device per hour.
ALTER TABLE apps ADD COLUMN IF NOT EXISTS priority_budget integer NOT NULL DEFAULT 15 CHECK (priority_budget >= 0);
ALTER TABLE apps ADD COLUMN IF NOT EXISTS frequent_priority_budget integer NOT NULL DEFAULT 60
    CHECK (frequent_priority_budget >= 0);
ALTER TABLE apps ADD COLUMN IF NOT EXISTS start_budget integer NOT NULL DEFAULT 10 CHECK (start_budget >= 0);

-- Named users: an app's own user ids, each linking any number of channels.
CREATE TABLE IF NOT EXISTS named_users (
    app_id        bigint NOT NULL REFERENCES apps (id) ON DELETE CASCADE,
    named_user_id text NOT NULL CHECK (char_length(named_user_id) BETWEEN 1 AND 128),
    created_at    timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (app_id, named_user_id)
);
ALTER TABLE named_users ADD COLUMN IF NOT EXISTS updated_at timestamptz NOT NULL DEFAULT now();

-- Channels: one per app installation on a device, as the Airship SDK registers them.
-- push_address is the device's alert token (lower-case hex), absent until the user allows alerts.
-- Tokens are checked by length and a negated class, not `~ '^[0-9a-f]{64,200}$'`: PostgreSQL's
-- regex engine takes ~50 µs on that bounded repetition, which was a fifth of registration's CPU.
CREATE TABLE IF NOT EXISTS channels (
    app_id                  bigint NOT NULL,
    channel_id              uuid NOT NULL,
    device_type             text NOT NULL DEFAULT 'ios' CHECK (device_type = 'ios'),
    push_address            text CHECK (octet_length(push_address) BETWEEN 64 AND 200 AND push_address !~ '[^0-9a-f]'),
    opt_in                  boolean NOT NULL DEFAULT false,
    background              boolean NOT NULL DEFAULT false,
    installed               boolean NOT NULL DEFAULT true,
    frequent_pushes_enabled boolean NOT NULL DEFAULT false,
    named_user_id           text,
    alias                   text,
    timezone                text,
    locale_language         text,
    locale_country          text,
    badge                   integer,
    quiet_time              jsonb,
    attributes              jsonb NOT NULL DEFAULT '{}',
    created_at              timestamptz NOT NULL DEFAULT now(),
    last_registration       timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (app_id, channel_id),
    FOREIGN KEY (app_id, named_user_id) REFERENCES named_users (app_id, named_user_id)
        ON DELETE SET NULL (named_user_id)
);
-- No foreign key to apps: every insert would take a KEY SHARE lock on the app's one row, and
-- concurrent registrations then share that lock through multixacts, which cost a quarter of
-- registration's throughput. Apps are never deleted, and a channel is only written for the app
-- its request authenticated as.
ALTER TABLE channels DROP CONSTRAINT IF EXISTS channels_app_id_fkey;
-- The same device token registering again finds its channel instead of making a duplicate.
CREATE UNIQUE INDEX IF NOT EXISTS channels_by_push_address
    ON channels (app_id, push_address) WHERE push_address IS NOT NULL;
-- Audience `named_user`.
CREATE INDEX IF NOT EXISTS channels_by_named_user
    ON channels (app_id, named_user_id) WHERE named_user_id IS NOT NULL;

-- Tags on channels, by tag group (`device` when the SDK names none). Audience `tag` reads
-- (app, group, tag) → channels; the channel lookup reads (app, channel) → tags.
CREATE TABLE IF NOT EXISTS channel_tags (
    app_id     bigint NOT NULL,
    tag_group  text NOT NULL,
    tag        text NOT NULL,
    channel_id uuid NOT NULL,
    PRIMARY KEY (app_id, tag_group, tag, channel_id),
    FOREIGN KEY (app_id, channel_id) REFERENCES channels (app_id, channel_id) ON DELETE CASCADE
);
CREATE INDEX IF NOT EXISTS channel_tags_by_channel ON channel_tags (app_id, channel_id);

-- Tags on named users apply to every channel of the named user.
CREATE TABLE IF NOT EXISTS named_user_tags (
    app_id        bigint NOT NULL,
    tag_group     text NOT NULL,
    tag           text NOT NULL,
    named_user_id text NOT NULL,
    PRIMARY KEY (app_id, tag_group, tag, named_user_id),
    FOREIGN KEY (app_id, named_user_id) REFERENCES named_users (app_id, named_user_id) ON DELETE CASCADE
);
CREATE INDEX IF NOT EXISTS named_user_tags_by_named_user ON named_user_tags (app_id, named_user_id);

-- Live Activity update tokens, tracked by name: at most one activity per name per channel.
-- The row stays after `remove` (token NULL, state 'removed') so that an older `set` arriving
-- late cannot bring it back: entries apply last-writer-wins by the SDK's action_ts_ms.
CREATE TABLE IF NOT EXISTS live_activities (
    app_id         bigint NOT NULL,
    channel_id     uuid NOT NULL,
    name           text NOT NULL,
    activity_id    text NOT NULL,
    token          text CHECK (octet_length(token) BETWEEN 64 AND 200 AND token !~ '[^0-9a-f]'),
    state          text NOT NULL DEFAULT 'active' CHECK (state IN ('active', 'ended', 'removed')),
    started_at     timestamptz NOT NULL,
    action_ts_ms   bigint NOT NULL,
    ended_at       timestamptz,
    dismiss_at     timestamptz,
    updated_at     timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (app_id, channel_id, name),
    FOREIGN KEY (app_id, channel_id) REFERENCES channels (app_id, channel_id) ON DELETE CASCADE
);
-- Hot path: "update tokens of activities named N in app A on channels matching audience X".
-- Only active activities are indexed, and the token rides along so the join never visits the heap.
CREATE INDEX IF NOT EXISTS live_activities_active_by_name
    ON live_activities (app_id, name, channel_id) INCLUDE (token, started_at)
    WHERE state = 'active';
-- What an update skips: the name's ended activities (few; without it, counting them read the whole table).
CREATE INDEX IF NOT EXISTS live_activities_ended_by_name
    ON live_activities (app_id, name, channel_id) WHERE state = 'ended';

-- Push-to-start tokens, one per ActivityAttributes type per channel (token NULL once removed).
CREATE TABLE IF NOT EXISTS push_to_start_tokens (
    app_id          bigint NOT NULL,
    channel_id      uuid NOT NULL,
    attributes_type text NOT NULL,
    token           text CHECK (octet_length(token) BETWEEN 64 AND 200 AND token !~ '[^0-9a-f]'),
    action_ts_ms    bigint NOT NULL,
    updated_at      timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (app_id, channel_id, attributes_type),
    FOREIGN KEY (app_id, channel_id) REFERENCES channels (app_id, channel_id) ON DELETE CASCADE
);
CREATE INDEX IF NOT EXISTS push_to_start_tokens_by_type
    ON push_to_start_tokens (app_id, attributes_type, channel_id) INCLUDE (token)
    WHERE token IS NOT NULL;

-- Pushes: the work queue. A push is accepted as 'queued'; a worker claims it ('sending') with
-- FOR UPDATE SKIP LOCKED and fans it out in parts (push_parts below); it is 'done' (or 'superseded')
-- once every part is.
CREATE TABLE IF NOT EXISTS pushes (
    app_id            bigint NOT NULL,
    push_id           uuid NOT NULL,
    operation_id      uuid NOT NULL,
    state             text NOT NULL DEFAULT 'queued'
                      CHECK (state IN ('queued', 'sending', 'done', 'superseded', 'failed')),
    kind              text NOT NULL CHECK (kind IN ('live_activity', 'alert')),
    activity_name     text,
    event             text CHECK (event IN ('start', 'update', 'end')),
    aps_timestamp     bigint,
    audience          jsonb NOT NULL,
    payload           jsonb NOT NULL,
    accepted_at       timestamptz NOT NULL DEFAULT now(),
    not_before        timestamptz NOT NULL DEFAULT now(),
    claimed_by        text,
    attempts          integer NOT NULL DEFAULT 0,
    counts            jsonb NOT NULL DEFAULT '{}',
    started_at        timestamptz,
    finished_at       timestamptz,
    PRIMARY KEY (app_id, push_id),
    CHECK ((kind = 'live_activity') = (activity_name IS NOT NULL AND event IS NOT NULL))
);
-- No foreign key to apps, as for channels: pushes are accepted by the thousand per second.
ALTER TABLE pushes DROP CONSTRAINT IF EXISTS pushes_app_id_fkey;
-- What a worker sends for every target, built and size-checked at acceptance: the APNs body (compact JSON,
-- `payload` being the push object as sent), its push type, priority, collapse id and expiry, and for a start,
-- the ActivityAttributes type whose push-to-start tokens it goes to.
ALTER TABLE pushes ADD COLUMN IF NOT EXISTS apns_body text;
ALTER TABLE pushes ADD COLUMN IF NOT EXISTS push_type text CHECK (push_type IN ('liveactivity', 'alert', 'background'));
ALTER TABLE pushes ADD COLUMN IF NOT EXISTS priority smallint CHECK (priority IN (5, 10));
ALTER TABLE pushes ADD COLUMN IF NOT EXISTS collapse_id text;
ALTER TABLE pushes ADD COLUMN IF NOT EXISTS expires_at timestamptz;
ALTER TABLE pushes ADD COLUMN IF NOT EXISTS attributes_type text;
-- Whether the push lights the screen (an alert, a start, an end): such pushes get priority 10 first when a
-- token's budget runs low.
ALTER TABLE pushes ADD COLUMN IF NOT EXISTS alerting boolean NOT NULL DEFAULT true;
-- Hot path: claiming work. The index holds only unfinished pushes, so it stays as small as the
-- backlog however long the history grows.
CREATE INDEX IF NOT EXISTS pushes_unfinished
    ON pushes (app_id, not_before) WHERE state IN ('queued', 'sending');
-- Per (app, name) ordering: a name's unfinished pushes by timestamp, which the intake makes strictly increasing
-- in acceptance order. Workers claim the first and supersede updates that newer ones wait behind.
DROP INDEX IF EXISTS pushes_by_activity_name;
CREATE INDEX IF NOT EXISTS pushes_unfinished_by_name
    ON pushes (app_id, activity_name, aps_timestamp)
    WHERE activity_name IS NOT NULL AND state IN ('queued', 'sending');
-- Reports: the recent pushes of an app.
CREATE INDEX IF NOT EXISTS pushes_by_acceptance ON pushes (app_id, accepted_at DESC);
-- A push's fan-out in parts: each a range of channel ids (after_channel_id, through_channel_id], claimed
-- by one worker at a time with FOR UPDATE SKIP LOCKED under a lease and checkpointed at its cursor, so a
-- worker that dies mid fan-out is resumed by another from the last checkpoint. A push starts as one part
-- over every channel; when its first batch comes back full, the rest of its range is split into parts
-- that other workers, or the same worker's other claim loops, take up at once.
CREATE TABLE IF NOT EXISTS push_parts (
    app_id             bigint NOT NULL,
    push_id            uuid NOT NULL,
    part               smallint NOT NULL,
    after_channel_id   uuid NOT NULL,
    through_channel_id uuid NOT NULL,
    cursor_channel_id  uuid NOT NULL,
    state              text NOT NULL DEFAULT 'queued' CHECK (state IN ('queued', 'sending', 'done', 'superseded')),
    claimed_by         text,
    lease_expires_at   timestamptz,
    counts             jsonb NOT NULL DEFAULT '{}',
    accepted_at        timestamptz NOT NULL,
    PRIMARY KEY (app_id, push_id, part)
);
-- Hot path: claiming a part, oldest push first. Only unfinished parts are in it.
CREATE INDEX IF NOT EXISTS push_parts_unfinished
    ON push_parts (app_id, accepted_at) WHERE state IN ('queued', 'sending');
-- Pushes being sent before parts existed kept their cursor on the push: each becomes one part that resumes
-- from it (read through to_jsonb, so this statement still runs once the column is gone). Then leases and
-- cursors live on the parts only.
INSERT INTO push_parts (app_id, push_id, part, after_channel_id, through_channel_id, cursor_channel_id, accepted_at)
SELECT p.app_id, p.push_id, 0, '00000000-0000-0000-0000-000000000000', 'ffffffff-ffff-ffff-ffff-ffffffffffff',
       coalesce((to_jsonb(p) ->> 'cursor_channel_id')::uuid, '00000000-0000-0000-0000-000000000000'), p.accepted_at
FROM pushes p
WHERE p.state = 'sending' AND NOT EXISTS (SELECT 1 FROM push_parts t WHERE t.app_id = p.app_id AND t.push_id = p.push_id);
ALTER TABLE pushes DROP COLUMN IF EXISTS lease_expires_at;
ALTER TABLE pushes DROP COLUMN IF EXISTS cursor_channel_id;

-- The newest timestamp accepted for each Live Activity name: a later push of the name must be newer, or
-- devices would drop it (ActivityKit ignores a push older than the last one it applied).
CREATE TABLE IF NOT EXISTS activity_names (
    app_id         bigint NOT NULL,
    name           text NOT NULL,
    last_timestamp bigint NOT NULL,
    last_push_id   uuid NOT NULL,
    PRIMARY KEY (app_id, name)
);

-- Idempotency keys of POST /api/push: the same key within 24 hours gets the first answer again.
CREATE TABLE IF NOT EXISTS push_requests (
    app_id          bigint NOT NULL,
    idempotency_key text NOT NULL,
    operation_id    uuid NOT NULL,
    push_ids        uuid[] NOT NULL,
    created_at      timestamptz NOT NULL,
    PRIMARY KEY (app_id, idempotency_key)
);

-- Bearer tokens for the server API (`blimp apps token create`), by name, stored as SHA-256 digests.
CREATE TABLE IF NOT EXISTS api_tokens (
    app_id       bigint NOT NULL REFERENCES apps (id) ON DELETE CASCADE,
    name         text NOT NULL CHECK (char_length(name) BETWEEN 1 AND 128),
    token_sha256 bytea NOT NULL,
    created_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (app_id, name)
);

-- Delivery outcomes: what APNs answered for each token of each push (status 0: no answer,
-- e.g. the connection was lost). Admins read the last N per token.
CREATE TABLE IF NOT EXISTS delivery_outcomes (
    app_id     bigint NOT NULL,
    push_id    uuid NOT NULL,
    token      text NOT NULL,
    channel_id uuid,
    status     smallint NOT NULL,
    reason     text,
    apns_id    uuid,
    priority   smallint,
    sent_at    timestamptz NOT NULL DEFAULT now()
);
-- No foreign key to pushes: a fan-out writes thousands of outcomes a second, and each would check and share-lock
-- its push's row, which the same fan-out updates at every checkpoint. Pushes are never deleted.
ALTER TABLE delivery_outcomes DROP CONSTRAINT IF EXISTS delivery_outcomes_app_id_push_id_fkey;
-- A token's recent outcomes (the priority budget counts them), found through its channel: a key of 32 bytes
-- instead of the token's 64 to 200 characters makes the index a quarter the size and its inserts cheaper.
DROP INDEX IF EXISTS delivery_outcomes_by_token;
CREATE INDEX IF NOT EXISTS delivery_outcomes_by_channel ON delivery_outcomes (app_id, channel_id, sent_at DESC);
CREATE INDEX IF NOT EXISTS delivery_outcomes_by_push ON delivery_outcomes (app_id, push_id);

-- version 2: pushes that fail or are cancelled
-- A part whose delivery keeps failing is tried again after a backoff (attempts, retry_at) a bounded
-- number of times; then it fails, and with it its push, whose report gives the reason. A push can also
-- be cancelled while queued or failed. Finished pushes leave the claim indexes, so a name's later
-- pushes go on.
ALTER TABLE pushes ADD COLUMN failure_reason text;
ALTER TABLE pushes DROP CONSTRAINT pushes_state_check;
ALTER TABLE pushes ADD CONSTRAINT pushes_state_check
    CHECK (state IN ('queued', 'sending', 'done', 'superseded', 'failed', 'cancelled')) NOT VALID;
ALTER TABLE pushes VALIDATE CONSTRAINT pushes_state_check;
ALTER TABLE push_parts ADD COLUMN attempts integer NOT NULL DEFAULT 0;
ALTER TABLE push_parts ADD COLUMN retry_at timestamptz;
ALTER TABLE push_parts DROP CONSTRAINT push_parts_state_check;
ALTER TABLE push_parts ADD CONSTRAINT push_parts_state_check
    CHECK (state IN ('queued', 'sending', 'done', 'superseded', 'failed', 'cancelled')) NOT VALID;
ALTER TABLE push_parts VALIDATE CONSTRAINT push_parts_state_check;
-- An end's dismissal date, which workers record on the activities it ends: a column, so that workers never
-- read it back out of the APNs body. Ends still queued take theirs from their body once, here.
ALTER TABLE pushes ADD COLUMN dismissal_date timestamptz;
UPDATE pushes SET dismissal_date = to_timestamp((apns_body::jsonb #>> '{aps,dismissal-date}')::double precision)
WHERE event = 'end' AND state IN ('queued', 'sending') AND apns_body::jsonb #> '{aps,dismissal-date}' IS NOT NULL;

-- version 3: byte limits on names
-- The API bounds names in bytes as well as characters (TextLimit): one character can carry any number of
-- combining marks. These CHECKs hold the same limits for every new row; NOT VALID leaves rows written before
-- them as they are.
ALTER TABLE channel_tags ADD CONSTRAINT channel_tags_bytes
    CHECK (octet_length(tag_group) <= 512 AND octet_length(tag) <= 512) NOT VALID;
ALTER TABLE named_user_tags ADD CONSTRAINT named_user_tags_bytes
    CHECK (octet_length(tag_group) <= 512 AND octet_length(tag) <= 512) NOT VALID;
ALTER TABLE named_users ADD CONSTRAINT named_users_bytes CHECK (octet_length(named_user_id) <= 512) NOT VALID;
ALTER TABLE channels ADD CONSTRAINT channels_bytes
    CHECK (octet_length(timezone) <= 512 AND octet_length(locale_language) <= 512
           AND octet_length(locale_country) <= 512 AND octet_length(alias) <= 512) NOT VALID;
ALTER TABLE live_activities ADD CONSTRAINT live_activities_bytes
    CHECK (octet_length(name) <= 1024 AND octet_length(activity_id) <= 1024) NOT VALID;
ALTER TABLE push_to_start_tokens ADD CONSTRAINT push_to_start_tokens_bytes
    CHECK (octet_length(attributes_type) <= 1024) NOT VALID;
ALTER TABLE pushes ADD CONSTRAINT pushes_bytes
    CHECK (octet_length(activity_name) <= 1024 AND octet_length(attributes_type) <= 1024) NOT VALID;

-- version 4: whether devices may associate themselves with named users
-- The stock SDK's identify call carries no proof from the app's backend, so anyone holding the app secret can
-- claim any named user's pushes. An app that sets this to false leaves association to the server API: a device's
-- identify then only resolves its contact.
ALTER TABLE apps ADD COLUMN device_association boolean NOT NULL DEFAULT true;

-- version 5: fair claims between apps
-- When each app last had a push claimed: workers take the next new push from the app that waited longest, so one
-- app's backlog of queued pushes delays another app's push by a claim, not by the whole backlog.
CREATE TABLE dispatch_turns (
    app_id          bigint PRIMARY KEY,
    last_claimed_at timestamptz NOT NULL
);

-- version 6: queued pushes in acceptance order
-- A claim walks an app's queued pushes oldest first and stops at the first that is the first of its name. With this
-- index it reads them in order and stops at once; without it, a sudden backlog (20,000 pushes, statistics not yet
-- updated) was planned as a nested loop over every pair of queued pushes: 127 s for one claim.
CREATE INDEX pushes_queued_by_acceptance ON pushes (app_id, accepted_at) WHERE state = 'queued';

-- version 7: nonces of signed SDK requests
-- A signed request is accepted once: its nonce is kept, per app, until its signature's window has passed (the
-- janitor deletes it then). UNLOGGED: written without WAL, which cost a fifth of registration's throughput with
-- fsync on (bench/registration.sh, docs/performance.md). A crash or a failover to a standby empties it, so a request
-- captured in the 24 hours before could be accepted once more; whoever has the app secret can sign anyway.
CREATE UNLOGGED TABLE used_nonces (
    app_id     bigint NOT NULL,
    nonce      uuid NOT NULL,
    expires_at timestamptz NOT NULL,
    PRIMARY KEY (app_id, nonce)
);
-- The janitor walks it app by app: every key leads with app_id.
CREATE INDEX used_nonces_by_expiry ON used_nonces (app_id, expires_at);

-- version 8, no transaction: a named user's channels in id order
-- A named user's channels page in channel id order (`GET /api/named_users?id=`): each page is a range of this
-- index, however many channels the named user has. Built concurrently, so that registrations go on while it builds;
-- the index it replaces (a prefix of it) goes once it is ready.
DROP INDEX CONCURRENTLY IF EXISTS channels_by_named_user_and_id;
CREATE INDEX CONCURRENTLY channels_by_named_user_and_id
    ON channels (app_id, named_user_id, channel_id) WHERE named_user_id IS NOT NULL;
DROP INDEX CONCURRENTLY IF EXISTS channels_by_named_user;

-- version 9: app secret rotation with an overlap
-- The app secret ships inside every installed app, so a new one cannot replace it at once: the previous secret (its
-- digest, and sealed, since the SDK signs with it) stays valid until previous_app_secret_expires_at, so that apps
-- have time to update. NULL when the secret was never rotated or the overlap was zero.
ALTER TABLE apps ADD COLUMN previous_app_secret_sha256 bytea;
ALTER TABLE apps ADD COLUMN previous_app_secret_sealed bytea;
ALTER TABLE apps ADD COLUMN previous_app_secret_expires_at timestamptz;
ALTER TABLE apps ADD CONSTRAINT apps_previous_app_secret
    CHECK ((previous_app_secret_sha256 IS NULL) = (previous_app_secret_expires_at IS NULL)) NOT VALID;

-- version 10: the console's sessions and rollups
-- Console sessions, shared by every API replica: the SHA-256 digest of the cookie's token, the app the session may
-- see (NULL: the deployment admin, who sees every app) and its CSRF token. Logging out deletes the row. They are the
-- deployment's, found by their token, so their indexes need not lead with app_id.
CREATE TABLE console_sessions (
    token_sha256 bytea PRIMARY KEY,
    app_id       bigint REFERENCES apps (id) ON DELETE CASCADE,
    csrf_token   text NOT NULL,
    created_at   timestamptz NOT NULL DEFAULT now(),
    expires_at   timestamptz NOT NULL
);
CREATE INDEX console_sessions_by_app ON console_sessions (app_id);
CREATE INDEX console_sessions_by_expiry ON console_sessions (expires_at);
-- APNs sends per minute by status, for the console's chart: workers add one row per status with each checkpoint's
-- outcomes, so no row is written by two workers at once; the janitor deletes rows over two hours old.
CREATE TABLE send_tallies (
    app_id bigint NOT NULL,
    minute timestamptz NOT NULL,
    status smallint NOT NULL,
    sends  integer NOT NULL
);
CREATE INDEX send_tallies_by_minute ON send_tallies (app_id, minute);
-- Counts the console shows that would read a million rows per page: refreshed by the janitor once a minute.
CREATE TABLE app_rollups (
    app_id      bigint PRIMARY KEY,
    channels    bigint NOT NULL,
    opted_in    bigint NOT NULL,
    computed_at timestamptz NOT NULL
);
-- Per Live Activity name: channels whose activity is active (updatable), ended, or expired (active, but started
-- more than 8 hours ago: iOS ended it).
CREATE TABLE activity_name_rollups (
    app_id      bigint NOT NULL,
    name        text NOT NULL,
    active      bigint NOT NULL,
    ended       bigint NOT NULL,
    expired     bigint NOT NULL,
    computed_at timestamptz NOT NULL,
    PRIMARY KEY (app_id, name)
);

-- version 11, no transaction: a Live Activity name's pushes, newest first
-- The console's timeline of a name (finished pushes included), a range of this index however long the history.
DROP INDEX CONCURRENTLY IF EXISTS pushes_by_activity_name_and_acceptance;
CREATE INDEX CONCURRENTLY pushes_by_activity_name_and_acceptance
    ON pushes (app_id, activity_name, accepted_at DESC) WHERE activity_name IS NOT NULL;

-- version 12: deployment-wide leases and secrets
-- Short leases that let one process of the deployment do what must be done once (export the deployment's gauges):
-- a process holds a lease while it renews it before expires_at; another takes it over once it lapses. Plain rows,
-- so they work through a connection pooler in transaction mode, where session advisory locks do not.
CREATE TABLE deployment_leases (
    name       text PRIMARY KEY,
    holder     text NOT NULL,
    expires_at timestamptz NOT NULL
);
-- Keys the deployment derives once and must keep across rotations of BLIMP_SECRET_KEY (what contact ids are derived
-- from), sealed under the current server key; `blimp secret-key rotate` seals them again under the new one.
CREATE TABLE deployment_secrets (
    name       text PRIMARY KEY,
    sealed     bytea NOT NULL,
    updated_at timestamptz NOT NULL DEFAULT now()
);

-- version 13: a push's trace context
-- The W3C `traceparent` of the request that queued the push, when tracing is on, so that the workers' spans
-- continue the request's trace from the 202 to APNs's answers.
ALTER TABLE pushes ADD COLUMN trace_parent text;

-- version 14: activities awaiting their token, and held pushes
-- A start sent by push-to-start leaves, per channel and name, an activity awaiting its update token: the start and
-- when APNs accepted it. It is kept apart from live_activities, whose columns are the SDK's last-writer-wins record, so
-- it neither writes nor erases action_ts_ms or an ended activity's tombstone. While it awaits, the newest update or end
-- of the name that reached it (by aps timestamp) is held on it. The SDK's `set` of the name's update token, for an
-- activity started no earlier than sent_at less the allowed clock skew, deletes it and queues the held push in
-- held_releases in the same statement. Past the activity's 8 hours the janitor marks it expired (and deletes it 4 hours
-- later), counting it on the start and on the held push.
CREATE TABLE awaiting_activities (
    app_id         bigint NOT NULL,
    channel_id     uuid NOT NULL,
    name           text NOT NULL,
    start_push_id  uuid NOT NULL,
    sent_at        timestamptz NOT NULL,
    state          text NOT NULL DEFAULT 'awaiting' CHECK (state IN ('awaiting', 'expired')),
    held_push_id   uuid,
    held_timestamp bigint,
    PRIMARY KEY (app_id, channel_id, name),
    FOREIGN KEY (app_id, channel_id) REFERENCES channels (app_id, channel_id) ON DELETE CASCADE,
    CHECK ((held_push_id IS NULL) = (held_timestamp IS NULL))
);
-- What an update or end of a name holds, and what a start skips: the name's awaiting activities.
CREATE INDEX awaiting_activities_by_name ON awaiting_activities (app_id, name, channel_id) WHERE state = 'awaiting';
-- The janitor's expiry, app by app.
CREATE INDEX awaiting_activities_by_age ON awaiting_activities (app_id, sent_at);
-- Held pushes that a token released: each goes out once, to that token, from a worker that claims it under a lease
-- (the API has no APNs client). A row is deleted once APNs answered, so the table is as small as what waits to be
-- sent, and a claim may scan it.
CREATE TABLE held_releases (
    app_id           bigint NOT NULL,
    channel_id       uuid NOT NULL,
    name             text NOT NULL,
    push_id          uuid NOT NULL,
    token            text NOT NULL,
    released_at      timestamptz NOT NULL,
    attempts         integer NOT NULL DEFAULT 0,
    claimed_by       text,
    lease_expires_at timestamptz,
    PRIMARY KEY (app_id, channel_id, name)
);
-- What became of a push's held copies after the push itself finished: sent once a token came, or expired awaiting.
ALTER TABLE pushes ADD COLUMN delivered_after_token integer NOT NULL DEFAULT 0;
ALTER TABLE pushes ADD COLUMN expired_awaiting_token integer NOT NULL DEFAULT 0;
-- `apns-unique-id`, which APNs's sandbox answers with: the key of the delivery log in Apple's Push Notifications
-- Console.
ALTER TABLE delivery_outcomes ADD COLUMN apns_unique_id uuid;

-- version 15, no transaction: each Live Activity's state, listed by name
-- `GET /api/live_activities?name=` pages a name's activities in channel order, each page a range of an index per
-- state: live_activities_active_by_name and live_activities_ended_by_name hold the active and ended ones, these the
-- ones the device removed and the starts that expired awaiting their token. Partial, so that neither registration's
-- token writes nor the fan-out's writes add entries to them: only a removal (and the janitor's expiry) does. Each is
-- dropped first, so that a build that failed midway (leaving an invalid index) is built again.
DROP INDEX CONCURRENTLY IF EXISTS live_activities_removed_by_name;
CREATE INDEX CONCURRENTLY live_activities_removed_by_name
    ON live_activities (app_id, name, channel_id) WHERE state = 'removed';
DROP INDEX CONCURRENTLY IF EXISTS awaiting_activities_expired_by_name;
CREATE INDEX CONCURRENTLY awaiting_activities_expired_by_name
    ON awaiting_activities (app_id, name, channel_id) WHERE state = 'expired';

-- version 16: live activity broadcast channels
-- The app's iOS 18 broadcast channels (APNs's, never Airship channels), each backing a Live Activity name: what APNs's
-- channel management answered (`apns-channel-id`) and the storage policy it was created with. At most one live channel
-- per name; a deleted one stays, with when and why: `admin` (deleted through the API), `ended` (an end published through
-- it, after which Blimp deleted it at APNs) or `apns` (a publish answered ChannelNotRegistered or BadChannelId). Until an
-- admin acknowledges a channel APNs deleted (acknowledged_at), the Push API refuses the name, which would otherwise
-- quietly reach no subscriber (https://developer.apple.com/documentation/usernotifications/sending-channel-management-requests-to-apns).
CREATE TABLE live_activity_channels (
    app_id          bigint NOT NULL REFERENCES apps (id) ON DELETE CASCADE,
    name            text NOT NULL,
    apns_channel_id text NOT NULL,
    storage_policy  smallint NOT NULL CHECK (storage_policy IN (0, 1)),
    created_at      timestamptz NOT NULL,
    deleted_at      timestamptz,
    deleted_reason  text CHECK (deleted_reason IN ('admin', 'ended', 'apns')),
    acknowledged_at timestamptz,
    PRIMARY KEY (app_id, apns_channel_id),
    CHECK ((deleted_at IS NULL) = (deleted_reason IS NULL))
);
-- At most one live channel per name.
CREATE UNIQUE INDEX live_activity_channels_live ON live_activity_channels (app_id, name) WHERE deleted_at IS NULL;
-- A name's channels, newest first: what the Push API checks for each Live Activity name it accepts.
CREATE INDEX live_activity_channels_by_name ON live_activity_channels (app_id, name, created_at DESC);
-- The channel a push went through: a start subscribed its activities to it with `input-push-channel` (such activities
-- never report an update token, so they never await one), an update or end is published to it once. For an update or
-- end, what APNs answered the publish (status 0: no answer), its `apns-request-id` and when.
ALTER TABLE pushes ADD COLUMN broadcast_channel_id text;
ALTER TABLE pushes ADD COLUMN broadcast_status smallint;
ALTER TABLE pushes ADD COLUMN broadcast_reason text;
ALTER TABLE pushes ADD COLUMN broadcast_request_id uuid;
ALTER TABLE pushes ADD COLUMN broadcast_published_at timestamptz;

-- version 17: scheduled pushes
-- Per app: how late a schedule may still fire after Blimp was down at its time (else the occurrence is recorded as
-- missed), and the time zone of channels without a valid one for local-time schedules.
ALTER TABLE apps ADD COLUMN schedule_grace_seconds integer NOT NULL DEFAULT 3600
    CHECK (schedule_grace_seconds BETWEEN 0 AND 604800);
ALTER TABLE apps ADD COLUMN default_time_zone text NOT NULL DEFAULT 'UTC';
-- The time zone names PostgreSQL knows (its time zone database decides every offset): a channel's reported time zone
-- counts only when it is one of these.
CREATE TABLE time_zones (name text PRIMARY KEY);
INSERT INTO time_zones SELECT name FROM pg_timezone_names ON CONFLICT DO NOTHING;
-- Airship's schedules (`/api/schedules`). `scheduled_time` is a wall-clock time: UTC, or for a local-time schedule
-- the time on each device's clock. `push` is the push object as given, checked at creation and again at each firing;
-- `recurring` the recurrence as Blimp renders it. `next_occurrence` is the earliest occurrence not yet fired
-- everywhere (NULL: none remains), `next_fire_at` the instant the next firing is due (NULL: nothing to fire, or
-- paused). A worker fires a due schedule under its row lock, in the transaction that queues the push, so each
-- occurrence fires once whatever the number of workers.
CREATE TABLE schedules (
    app_id          bigint NOT NULL REFERENCES apps (id) ON DELETE CASCADE,
    schedule_id     uuid NOT NULL,
    name            text CHECK (octet_length(name) <= 1024),
    local           boolean NOT NULL,
    scheduled_time  timestamp NOT NULL,
    recurring       jsonb,
    push            jsonb NOT NULL,
    paused          boolean NOT NULL DEFAULT false,
    next_occurrence timestamp,
    next_fire_at    timestamptz,
    created_at      timestamptz NOT NULL,
    updated_at      timestamptz NOT NULL,
    last_error      text,
    last_error_at   timestamptz,
    PRIMARY KEY (app_id, schedule_id)
);
-- The pending schedules only: a worker reads the due ones across apps in next_fire_at order from this small index.
CREATE INDEX schedules_due ON schedules (app_id, next_fire_at) WHERE next_fire_at IS NOT NULL;
CREATE INDEX schedules_by_creation ON schedules (app_id, created_at, schedule_id);
-- Each occurrence fired (per time zone for a local-time schedule; '' for UTC): the push it queued, or why none
-- (`missed`: past the grace period; otherwise the refusal). The primary key is what makes a firing happen once.
CREATE TABLE schedule_firings (
    app_id      bigint NOT NULL,
    schedule_id uuid NOT NULL,
    occurrence  timestamp NOT NULL,
    time_zone   text NOT NULL,
    push_id     uuid,
    skipped     text,
    fired_at    timestamptz NOT NULL,
    PRIMARY KEY (app_id, schedule_id, occurrence, time_zone),
    FOREIGN KEY (app_id, schedule_id) REFERENCES schedules ON DELETE CASCADE,
    CHECK ((push_id IS NULL) <> (skipped IS NULL))
);
-- A push fired by a local-time schedule for one time zone goes to the channels in that zone; `local_default_zone`:
-- also to the channels without a valid zone (the zone is the app's default).
ALTER TABLE pushes ADD COLUMN local_time_zone text;
ALTER TABLE pushes ADD COLUMN local_default_zone boolean NOT NULL DEFAULT false;

-- version 18, no transaction: channels by time zone
-- The distinct time zones of an app's channels, found by skipping through this index: what a local-time schedule
-- fires once for each.
DROP INDEX CONCURRENTLY IF EXISTS channels_by_time_zone;
CREATE INDEX CONCURRENTLY channels_by_time_zone ON channels (app_id, timezone) WHERE timezone IS NOT NULL;

-- version 19: Live Activity types
-- The app's declared Live Activity types (ActivityKit's `attributes_type`): a JSON Schema, in the subset Blimp checks
-- (ActivitySchema), for a start's `attributes` and one for every push's `content_state`, each stored as the canonical
-- document Blimp renders. Pushes whose content a type refuses are refused before anything is queued.
CREATE TABLE live_activity_types (
    app_id               bigint NOT NULL REFERENCES apps (id) ON DELETE CASCADE,
    attributes_type      text NOT NULL CHECK (octet_length(attributes_type) <= 1024),
    attributes_schema    text NOT NULL,
    content_state_schema text NOT NULL,
    created_at           timestamptz NOT NULL,
    updated_at           timestamptz NOT NULL,
    PRIMARY KEY (app_id, attributes_type)
);
-- The type of the name's last start the intake accepted: what an update or end of the name is checked against, and
-- what counts the activities in flight under a type whose schema changes.
ALTER TABLE activity_names ADD COLUMN attributes_type text;

-- version 20: audit trail
-- Who did what, kept for admins (`GET /api/audit`, the console's Audit pages): every push accepted and cancelled,
-- every schedule, Live Activity type, broadcast channel, credential and account change, every sign-in. `app_id` NULL:
-- a deployment-level entry (an admin's sign-in, an account change across apps, the server key). The actor is its
-- kind, plus the account, the label people know it by (an email, a token's name) and an API token's stable id.
-- `subject` names what was acted on (a push id, a schedule id, a credential's kind, a type's name, an email);
-- `details` adds facts in JSON. Neither ever holds a secret. Entries outlive what they name: no foreign keys.
CREATE TABLE audit_events (
    id               bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    app_id           bigint,
    at               timestamptz NOT NULL,
    actor_kind       text NOT NULL CHECK (actor_kind IN ('account', 'api_token', 'master_secret', 'admin_token', 'command_line', 'claimed_email')),
    actor_account_id bigint,
    actor_label      text CHECK (octet_length(actor_label) <= 1024),
    actor_token_id   uuid,
    address          text CHECK (octet_length(address) <= 1024),
    action           text NOT NULL CHECK (action IN (
        'push.accepted', 'push.cancelled', 'push.retried',
        'schedule.created', 'schedule.changed', 'schedule.paused', 'schedule.resumed', 'schedule.cancelled',
        'live_activity_type.saved', 'live_activity_type.deleted',
        'broadcast_channel.created', 'broadcast_channel.deleted',
        'credential.changed', 'app.created', 'app.changed',
        'account.created', 'account.removed', 'account.role_changed', 'account.password_changed', 'account.totp_changed',
        'sign_in', 'sign_in_failed', 'sign_out')),
    subject          text CHECK (octet_length(subject) <= 2048),
    details          jsonb,
    CHECK ((actor_kind = 'account') = (actor_account_id IS NOT NULL)),
    CHECK ((actor_kind = 'api_token') = (actor_token_id IS NOT NULL))
);
-- An app's entries newest first (the listings page by (at, id) descending); the deployment's across apps likewise.
CREATE INDEX audit_events_by_app ON audit_events (app_id, at DESC, id DESC);
CREATE INDEX audit_events_by_time ON audit_events (at DESC, id DESC);
-- An actor's entries by the label people know it by (an email, a token's name).
CREATE INDEX audit_events_by_actor ON audit_events (actor_label, at DESC, id DESC) WHERE actor_label IS NOT NULL;
-- A stable id for each server API token, so that the trail names a token by name and id (a token revoked and issued
-- again under the same name is another token).
ALTER TABLE api_tokens ADD COLUMN token_id uuid NOT NULL DEFAULT gen_random_uuid();

-- version 21: console accounts
-- People who sign in to the console as themselves. The email is stored lower-cased, so it is unique whatever its
-- case. The password hash carries its scrypt parameters and salt (PasswordHash), so they can be raised later. The
-- TOTP secret is sealed under the server key, bound to the email; `totp_confirmed` is set once the person has entered
-- a code from their authenticator, and `totp_last_step` is the last time step accepted, so a code is never accepted
-- twice, whichever replica sees it.
CREATE TABLE accounts (
    id                 bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    email              text NOT NULL UNIQUE CHECK (email = lower(email) AND octet_length(email) <= 254),
    password_hash      text NOT NULL,
    totp_secret_sealed bytea,
    totp_confirmed     boolean NOT NULL DEFAULT false,
    totp_last_step     bigint,
    created_at         timestamptz NOT NULL DEFAULT now()
);
-- A person's role in an app: viewer (reads every page), sender (also sends, schedules and cancels), admin (also the
-- app's credentials, API tokens and accounts). Keyed by app first, like every tenant table (docs/scaling.md); a
-- person's own roles are few, so reading them by account_id needs no index of its own.
CREATE TABLE account_roles (
    account_id bigint NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    app_id     bigint NOT NULL REFERENCES apps (id) ON DELETE CASCADE,
    role       text NOT NULL CHECK (role IN ('viewer', 'sender', 'admin')),
    PRIMARY KEY (app_id, account_id)
);
-- An account's sessions end with the account (and AccountStore deletes them when a role changes); an admin session
-- keeps the digest of the admin token it signed in with, so rotating BLIMP_ADMIN_TOKEN ends it.
ALTER TABLE console_sessions ADD COLUMN account_id bigint REFERENCES accounts (id) ON DELETE CASCADE;
ALTER TABLE console_sessions ADD COLUMN admin_token_sha256 bytea;
-- Admin sessions from before carry no token digest, so they would be refused: the admin signs in again.
DELETE FROM console_sessions WHERE app_id IS NULL;
CREATE INDEX console_sessions_by_account ON console_sessions (account_id) WHERE account_id IS NOT NULL;

-- version 22, no transaction: delivery outcomes by time, ahead of their move into day partitions
-- The next version moves the last two hours of outcomes into the partitioned table at once, and the janitor moves the
-- rest newest first (DispatchStore.trimOutcomes): both find an app's outcomes by time through this index, built here
-- without holding writes back. It goes with the old table once that is drained.
DROP INDEX CONCURRENTLY IF EXISTS delivery_outcomes_by_time;
CREATE INDEX CONCURRENTLY delivery_outcomes_by_time ON delivery_outcomes (app_id, sent_at);

-- version 23: delivery outcomes partitioned by day
-- Outcomes are kept by age (DispatchStore.trimOutcomes): whole days are dropped as partitions instead of deleted row
-- by row. The primary key is a surrogate id with the partition key, led by app_id; it is also the index the trim
-- deletes an app's older rows through. The janitor creates each day's partition days ahead (OutcomePartitions);
-- the DEFAULT partition takes any row no day partition holds (the janitor stopped for days, or a database restored
-- from an old copy), so an insert never fails for want of a partition, and the janitor moves such rows into their
-- day's partition when it creates it. delivery_outcomes_upgrade holds the three days around this upgrade.
-- The old table is renamed aside, not rewritten: readers see the new table only, which holds the last two hours
-- from the start (what priority budgets count), and the janitor moves the older rows still within their retention,
-- newest first, in short batches, then drops the old table with the rest. The previous release's trim, which runs for
-- minutes on a large table and would hold the rename (and every insert queued behind it) until it ends, is
-- cancelled first; it deletes by ctid, which is only unique within a partition, and stays correct on the new table
-- while every row is in delivery_outcomes_upgrade: finish the rollout within a day.
SET LOCAL lock_timeout = '10s';
SELECT pg_cancel_backend(pid) FROM pg_stat_activity
WHERE datname = current_database() AND usename = current_user AND pid <> pg_backend_pid()
  AND query LIKE '%DELETE FROM delivery_outcomes d%row_number() OVER (PARTITION BY app_id, channel_id, token%';
ALTER TABLE delivery_outcomes RENAME TO delivery_outcomes_unpartitioned;
ALTER INDEX delivery_outcomes_by_channel RENAME TO delivery_outcomes_unpartitioned_by_channel;
ALTER INDEX delivery_outcomes_by_push RENAME TO delivery_outcomes_unpartitioned_by_push;
CREATE TABLE delivery_outcomes (
    app_id         bigint NOT NULL,
    id             bigint GENERATED ALWAYS AS IDENTITY,
    push_id        uuid NOT NULL,
    token          text NOT NULL,
    channel_id     uuid,
    status         smallint NOT NULL,
    reason         text,
    apns_id        uuid,
    apns_unique_id uuid,
    priority       smallint,
    sent_at        timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (app_id, sent_at, id)
) PARTITION BY RANGE (sent_at);
CREATE INDEX delivery_outcomes_by_channel ON delivery_outcomes (app_id, channel_id, sent_at DESC);
CREATE INDEX delivery_outcomes_by_push ON delivery_outcomes (app_id, push_id);
CREATE TABLE delivery_outcomes_default PARTITION OF delivery_outcomes DEFAULT;
CREATE TABLE delivery_outcomes_upgrade PARTITION OF delivery_outcomes
    FOR VALUES FROM (date_trunc('day', now(), 'UTC') - interval '24 hours') TO (date_trunc('day', now(), 'UTC') + interval '48 hours');
WITH moved AS (
    DELETE FROM delivery_outcomes_unpartitioned o USING apps a
    WHERE o.app_id = a.id AND o.sent_at > now() - interval '2 hours'
    RETURNING o.app_id, o.push_id, o.token, o.channel_id, o.status, o.reason, o.apns_id, o.apns_unique_id, o.priority, o.sent_at)
INSERT INTO delivery_outcomes (app_id, push_id, token, channel_id, status, reason, apns_id, apns_unique_id, priority, sent_at)
SELECT * FROM moved;
-- A new database has nothing to move: its old table goes now (one line, so that the migrator's split keeps it whole).
DO 'BEGIN IF NOT EXISTS (SELECT FROM delivery_outcomes_unpartitioned) THEN DROP TABLE delivery_outcomes_unpartitioned; END IF; END';

-- version 24: a primary key on send tallies
-- A surrogate id, led by app_id and the minute: the key is also the index the console's chart reads an app's last hour
-- through and the trim deletes older rows through (they live as long as outcomes now). Adding the identity column
-- rewrites the table under its lock: the previous release kept two hours of tallies, a row per status per checkpoint,
-- so it is small.
ALTER TABLE send_tallies ADD COLUMN id bigint GENERATED ALWAYS AS IDENTITY;
ALTER TABLE send_tallies ADD PRIMARY KEY (app_id, minute, id);
DROP INDEX send_tallies_by_minute;

-- version 25: deployment rate limits
-- The token buckets of the rate limits that hold for the whole deployment (SharedRateLimiter), one per limit and key
-- (an app's id, an app and a client address, a sign-in's address or email): `tokens` as of `refilled_at`, by the
-- database's clock, refilled at `per_second` up to `burst` (the rate and burst the last replica to take from it
-- was configured with). Replicas take chunks of tokens in one upsert; `last_grant` is how many the last one got.
-- Deployment-level, not a tenant table: sign-in keys belong to no app. UNLOGGED: the buckets are a few seconds of
-- state that every request would otherwise write to the WAL; a crash empties the table, and every bucket starts full
-- again (at most one burst forgiven). The janitor deletes the rows that have refilled, so only keys in use stay.
CREATE UNLOGGED TABLE rate_buckets (
    name        text NOT NULL,
    key         text NOT NULL CHECK (octet_length(key) <= 600),
    per_second  double precision NOT NULL CHECK (per_second > 0),
    burst       double precision NOT NULL CHECK (burst >= 1),
    tokens      double precision NOT NULL,
    refilled_at timestamptz NOT NULL,
    last_grant  integer NOT NULL,
    PRIMARY KEY (name, key)
);

-- version 26: retention per app
-- An app's own retentions in seconds, NULL where it keeps the deployment's (BLIMP_RETENTION_PUSHES, _OUTCOMES, _AUDIT):
-- how long finished pushes (with their parts), delivery outcomes (with send tallies) and audit entries are kept. The
-- floors and the ceiling are RetentionPolicy's.
ALTER TABLE apps ADD COLUMN retention_pushes_seconds bigint CHECK (retention_pushes_seconds BETWEEN 86400 AND 315360000);
ALTER TABLE apps ADD COLUMN retention_outcomes_seconds bigint CHECK (retention_outcomes_seconds BETWEEN 3600 AND 315360000);
ALTER TABLE apps ADD COLUMN retention_audit_seconds bigint CHECK (retention_audit_seconds BETWEEN 1 AND 315360000);

-- version 27, no transaction: what the janitor deletes, found by age
-- The janitor deletes in batches of a few thousand rows, each batch found through one of these indexes app by app,
-- never by scanning a table: finished pushes by when they finished (the unfinished are not in it), Live Activities
-- by their start, idempotency keys by their creation.
DROP INDEX CONCURRENTLY IF EXISTS pushes_finished;
CREATE INDEX CONCURRENTLY pushes_finished ON pushes (app_id, finished_at) WHERE finished_at IS NOT NULL;
DROP INDEX CONCURRENTLY IF EXISTS live_activities_by_start;
CREATE INDEX CONCURRENTLY live_activities_by_start ON live_activities (app_id, started_at);
DROP INDEX CONCURRENTLY IF EXISTS push_requests_by_creation;
CREATE INDEX CONCURRENTLY push_requests_by_creation ON push_requests (app_id, created_at);

-- version 28: each Live Activity's order
-- Pushes of one name are ordered per activity, a name on a channel, not per name. A push's scope is what its audience
-- as written is confined to, when that is known before it is resolved: one channel (`channel:<id>`), or one named user
-- (`named_user:<id>`); NULL for any other audience (tags, all, or a name backed by a live activity channel, which is
-- one activity for all its subscribers). A push waits at its claim for the older unfinished pushes of its name that
-- may reach the same activities: every one, when either has no scope; otherwise those of the same scope, or of a
-- scope of another kind (a channel may be the named user's). Pushes to different channels or named users never wait.
ALTER TABLE pushes ADD COLUMN audience_scope text;
-- A name's last timestamp is no longer moved by every push (that row was one that every push of a shared name waited
-- on): what it holds is the floor that stamps stay above, and new names are listed without a last push.
ALTER TABLE activity_names ALTER COLUMN last_push_id DROP NOT NULL;

-- version 29, no transaction: pushes by audience, scope, acceptance and stamps ahead
-- The intake stamps a push without a timestamp one second after the last push of its name to the same audience as
-- written (md5 of the normalized JSON), and a worker skips an update that a newer one to that audience waits behind.
-- The claim probes a name's older unfinished pushes by scope, and all of them in acceptance order (push ids are
-- UUIDv7). pushes_unfinished_by_name goes: nothing reads it now, and PostgreSQL, with statistics taken before a burst
-- of pushes, would probe through it, reading every unfinished push of a shared name per probe. The previous release's
-- workers claim through it: until they are replaced, their claims read a name's unfinished pushes per candidate.
DROP INDEX CONCURRENTLY IF EXISTS pushes_by_audience;
CREATE INDEX CONCURRENTLY pushes_by_audience
    ON pushes (app_id, activity_name, (md5(audience::text)), aps_timestamp) WHERE activity_name IS NOT NULL;
DROP INDEX CONCURRENTLY IF EXISTS pushes_unfinished_by_scope;
CREATE INDEX CONCURRENTLY pushes_unfinished_by_scope
    ON pushes (app_id, activity_name, audience_scope COLLATE "C", push_id)
    WHERE activity_name IS NOT NULL AND state IN ('queued', 'sending');
-- Pushes stamped ahead of their acceptance (an audience pushed more than once a second, a caller's future timestamp):
-- the few after which a later push of the name may carry an older timestamp. A worker looks for them before it checks
-- each of an update's activities against what the activity was sent.
DROP INDEX CONCURRENTLY IF EXISTS pushes_stamped_ahead;
CREATE INDEX CONCURRENTLY pushes_stamped_ahead ON pushes (app_id, activity_name, aps_timestamp)
    WHERE activity_name IS NOT NULL AND aps_timestamp > date_part('epoch', accepted_at AT TIME ZONE 'UTC');
DROP INDEX CONCURRENTLY IF EXISTS pushes_unfinished_in_order;
CREATE INDEX CONCURRENTLY pushes_unfinished_in_order
    ON pushes (app_id, activity_name, push_id) WHERE activity_name IS NOT NULL AND state IN ('queued', 'sending');
DROP INDEX CONCURRENTLY IF EXISTS pushes_unfinished_by_name;

-- version 30, no transaction: pushes by activity
-- The last stamp of a name's audience as written, and whether a newer update to it waits, are read through one
-- expression of both: the md5 of the audience's JSON followed by the name (a JSON value ends where it ends, so no two
-- pairs run together alike). No index of a name's pushes answers that expression but this one: with statistics from
-- before a shared name's first pushes, PostgreSQL read pushes_by_audience's conditions through
-- pushes_by_activity_name_and_acceptance instead, every push of the name per read. pushes_by_audience is what the
-- previous release reads, and goes one release later.
DROP INDEX CONCURRENTLY IF EXISTS pushes_by_activity;
CREATE INDEX CONCURRENTLY pushes_by_activity
    ON pushes (app_id, (md5(audience::text || activity_name)), aps_timestamp) WHERE activity_name IS NOT NULL;

-- version 31: statistics the queue is planned by
-- What the planner needs of pushes is where rows are in the queue and whose they are, never what the wide values
-- hold. Without statistics of those, an analysis of 50,000 pushes takes under half the time (each sampled row's
-- bodies, and the md5 of its audience, were read). A comparison with md5 of the audience then counts on PostgreSQL's
-- default selectivity, which suits its index.
ALTER TABLE pushes ALTER COLUMN payload SET STATISTICS 0, ALTER COLUMN apns_body SET STATISTICS 0,
    ALTER COLUMN counts SET STATISTICS 0, ALTER COLUMN audience SET STATISTICS 0, ALTER COLUMN trace_parent SET STATISTICS 0;
ALTER INDEX pushes_by_activity ALTER COLUMN 2 SET STATISTICS 0;
ALTER INDEX pushes_by_audience ALTER COLUMN 3 SET STATISTICS 0;

-- version 32: the event log
-- What happened, for readers of POST /api/events: each event is inserted by the transaction that makes the change it
-- reports, so there is never one without the other. `xid` is that transaction (pg_current_xact_id(), which never
-- wraps); a stream reads an app's events in (xid, id) order and only below the oldest transaction still running
-- (pg_snapshot_xmin), so that no event can commit behind a reader's offset. What a reader can find elsewhere is not
-- copied: a PUSH_BODY's push object is read from `pushes`, a SEND's alerting from its push; `body` holds the rest
-- (a rejected send's status and APNs's reason). No foreign key to apps, as for pushes: events come by the thousand
-- per second.
CREATE TABLE events (
    app_id       bigint NOT NULL,
    xid          xid8 NOT NULL DEFAULT pg_current_xact_id(),
    id           bigint GENERATED ALWAYS AS IDENTITY,
    type         text NOT NULL,
    occurred_at  timestamptz NOT NULL,
    processed_at timestamptz NOT NULL DEFAULT now(),
    channel_id   uuid,
    push_id      uuid,
    body         jsonb,
    PRIMARY KEY (app_id, xid, id)
);
-- An app's own event retention in seconds, NULL where it keeps the deployment's (BLIMP_RETENTION_EVENTS).
ALTER TABLE apps ADD COLUMN retention_events_seconds bigint CHECK (retention_events_seconds BETWEEN 86400 AND 315360000);
-- The last event the janitor deleted of each app: a reader resuming from an offset below it may have missed events,
-- and is told so.
CREATE TABLE event_trims (
    app_id bigint PRIMARY KEY,
    xid    xid8 NOT NULL,
    id     bigint NOT NULL
);

-- version 33: an app's SEND events
-- Whether the app's event stream carries a SEND per device sent (the default). An app sending to millions may turn
-- them off: the rest of its events stay.
ALTER TABLE apps ADD COLUMN send_events boolean NOT NULL DEFAULT true;

-- version 34: when an activity's next state comes from time alone
-- When an activity's state changes by time alone (expired 8 hours after its start while active, dismissed at its
-- dismissal date once ended), so that the janitor reports it on the event stream once it passes: NULL once reported,
-- and while none is coming. Activities on record now get theirs where it is still ahead.
ALTER TABLE live_activities ADD COLUMN due_at timestamptz;
-- When the statement that made the activity active ran (a new activity on the channel, or one that was not active):
-- the token writer tells that from a new token of an active activity by it, reading nothing beside its upsert.
ALTER TABLE live_activities ADD COLUMN activated_at timestamptz;
UPDATE live_activities SET due_at = due.at
FROM (SELECT app_id, channel_id, name,
             CASE WHEN state = 'active' THEN started_at + interval '8 hours'
                  ELSE coalesce(dismiss_at, coalesce(ended_at, updated_at) + interval '4 hours') END AS at
      FROM live_activities) AS due
WHERE live_activities.app_id = due.app_id AND live_activities.channel_id = due.channel_id
  AND live_activities.name = due.name AND due.at > now();

-- version 35, no transaction: the activities whose time-derived state is coming, by when
DROP INDEX CONCURRENTLY IF EXISTS live_activities_due;
CREATE INDEX CONCURRENTLY live_activities_due ON live_activities (app_id, due_at) WHERE due_at IS NOT NULL;

-- version 36: webhooks
-- An app's webhook endpoints (at most 10): the app's events (those of `types`, every type when NULL) delivered in
-- signed batches (Standard Webhooks), at least once, in offset order. `cursor_*` is the last event delivered or passed
-- over; the batch being delivered is fixed at its first attempt (its id, body and last event), so that a retry sends
-- the same bytes under the same `webhook-id`. The signing secret is sealed under the server key (bound to the id);
-- after a rotation the previous one signs too until `previous_secret_until`. `next_attempt_at` is when a worker
-- looks again: at once after a delivery, after the retry schedule after a failure. A disabled endpoint (410, failing
-- for days, or its backlog past the event retention) says why, and waits for an admin.
CREATE TABLE webhooks (
    app_id                 bigint NOT NULL REFERENCES apps (id) ON DELETE CASCADE,
    id                     text NOT NULL,
    url                    text NOT NULL,
    types                  text[],
    secret_sealed          bytea NOT NULL,
    previous_secret_sealed bytea,
    previous_secret_until  timestamptz,
    enabled                boolean NOT NULL DEFAULT true,
    disabled_reason        text,
    created_at             timestamptz NOT NULL,
    cursor_xid             xid8 NOT NULL,
    cursor_id              bigint NOT NULL,
    batch_id               text,
    batch_body             bytea,
    batch_events           integer,
    batch_through_xid      xid8,
    batch_through_id       bigint,
    attempts               integer NOT NULL DEFAULT 0,
    failing_since          timestamptz,
    next_attempt_at        timestamptz NOT NULL,
    delivered_events       bigint NOT NULL DEFAULT 0,
    -- The last 10 attempts, newest first: when, the batch, its events, the status and the error (the API's last
    -- attempt is the first of them).
    recent_attempts        jsonb NOT NULL DEFAULT '[]',
    claimed_by             text,
    lease_expires_at       timestamptz,
    PRIMARY KEY (app_id, id)
);
-- What workers claim: enabled endpoints by when they are due (at most 10 an app: a claim reads them all).
CREATE INDEX webhooks_due ON webhooks (app_id, next_attempt_at) WHERE enabled;
-- Endpoints created, deleted, enabled again and given new secrets are on the audit trail.
ALTER TABLE audit_events DROP CONSTRAINT audit_events_action_check;
ALTER TABLE audit_events ADD CONSTRAINT audit_events_action_check CHECK (action IN (
    'push.accepted', 'push.cancelled', 'push.retried',
    'schedule.created', 'schedule.changed', 'schedule.paused', 'schedule.resumed', 'schedule.cancelled',
    'live_activity_type.saved', 'live_activity_type.deleted',
    'broadcast_channel.created', 'broadcast_channel.deleted',
    'webhook.created', 'webhook.deleted', 'webhook.enabled', 'webhook.rotated',
    'credential.changed', 'app.created', 'app.changed',
    'account.created', 'account.removed', 'account.role_changed', 'account.password_changed', 'account.totp_changed',
    'sign_in', 'sign_in_failed', 'sign_out')) NOT VALID;
