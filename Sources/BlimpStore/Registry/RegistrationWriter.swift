import BlimpCore
import Foundation
import Logging
import PostgresNIO

/// The two writes every device makes, each coalesced across concurrent requests into one multi-row statement (see
/// ``Coalescer``): creating its channel, and setting a Live Activity's update token (which also releases a push held
/// for the activity while it awaited the token, ``AwaitingToken``). Rows travel as one JSON array
/// (`json_to_recordset`), so a batch is one statement and one commit however many devices it carries.
struct RegistrationWriter: Sendable {
    let creations: Coalescer<NewChannel, Bool>
    let activities: Coalescer<ActivityToken, ActivityTokenWrite>

    /// With `prepared`, each statement is prepared once per connection (see ``JSONRowsStatement``).
    init(client: Database, logger: Logger, prepared: Bool, now: @escaping @Sendable () -> Date) {
        self.creations = Coalescer { channels in
            try await Self.create(channels, client: client, logger: logger, prepared: prepared, now: now())
        }
        self.activities = Coalescer { tokens in
            try await Self.set(tokens, client: client, logger: logger, prepared: prepared, now: now())
        }
    }

    /// A channel to insert unless its push address is registered in its app.
    struct NewChannel: Sendable {
        var appID: Int64
        var channelID: UUID
        var pushAddress: String?
        var columns: ChannelColumns
        var tags: [Tag]

        struct Tag: Sendable {
            var group: String
            var tag: String
        }

        init(_ registration: CheckedChannelRegistration, appID: Int64, channelID: UUID) {
            self.appID = appID
            self.channelID = channelID
            self.pushAddress = registration.pushAddress
            self.columns = ChannelColumns(registration)
            self.tags = registration.tags.pairsForANewOwner().map { Tag(group: $0.group, tag: $0.tag) }
        }

        /// The row: the columns' members and these, in one object.
        var json: RawJSON {
            var members = self.columns.members
            members.append(.init("app_id", .integer(self.appID)))
            members.append(.init("channel_id", .string(self.channelID.lowercaseString)))
            if let pushAddress = self.pushAddress { members.append(.init("push_address", .string(pushAddress))) }
            members.append(.init("tags", .array(self.tags.map { .object([.init("group", .string($0.group)), .init("tag", .string($0.tag))]) })))
            return .object(members)
        }
    }

    /// A Live Activity's update token, set last-writer-wins by `action_ts_ms`. A new activity under the name replaces
    /// the old one; the same activity keeps an `end` it received.
    struct ActivityToken: Sendable {
        var appID: Int64
        var channelID: UUID
        var name: String
        var activityID: String
        var token: String
        var startedAt: Double
        var actionMilliseconds: Int64

        /// The row.
        var json: RawJSON {
            .object([
                .init("app_id", .integer(self.appID)),
                .init("channel_id", .string(self.channelID.lowercaseString)),
                .init("name", .string(self.name)),
                .init("activity_id", .string(self.activityID)),
                .init("token", .string(self.token)),
                .init("started_at", .number(String(self.startedAt))),
                .init("action_ts_ms", .integer(self.actionMilliseconds)),
            ])
        }
    }

    /// Inserts the channels; `true` for each one inserted, `false` where its push address was already registered.
    private static func create(
        _ channels: [NewChannel],
        client: Database,
        logger: Logger,
        prepared: Bool,
        now: Date
    ) async throws -> [Bool] {
        let statement = InsertChannels(rows: RawJSON.array(channels.map(\.json)).text, now: now)
        let created = Set(try await statement.rows(on: client, prepared: prepared, logger: logger))
        return channels.map { created.contains($0.channelID) }
    }

    /// What setting one update token did.
    struct ActivityTokenWrite: Sendable, Equatable {
        /// The channel is in its app (whether or not a newer entry kept its place).
        var found = false
        /// Blimp had started the activity by push-to-start and awaited this token (``AwaitingToken``).
        var awaited = false
        /// The name was not tracked on the channel: its first activity there (a new row).
        var created = false
        /// A push held for the activity was queued for a worker to send to the token.
        var released = false
    }

    /// Sets the tokens, and releases the pushes held for the activities that awaited them.
    private static func set(
        _ tokens: [ActivityToken],
        client: Database,
        logger: Logger,
        prepared: Bool,
        now: Date
    ) async throws -> [ActivityTokenWrite] {
        var writes = [ActivityTokenWrite](repeating: ActivityTokenWrite(), count: tokens.count)
        // One statement cannot touch a row twice: entries for the same activity go in successive rounds, in order.
        for round in Self.rounds(tokens.map { ActivityKey(channel: ChannelKey($0), name: $0.name) }) {
            let statement = SetActivityTokens(rows: RawJSON.array(round.map { tokens[$0].json }).text, now: now)
            var written: [ActivityKey: ActivityTokenWrite] = [:]
            for row in try await statement.rows(on: client, prepared: prepared, logger: logger) {
                written[ActivityKey(channel: ChannelKey(appID: row.appID, channelID: row.channelID), name: row.name)] = row.write
            }
            for index in round {
                if let write = written[ActivityKey(channel: ChannelKey(tokens[index]), name: tokens[index].name)] { writes[index] = write }
            }
        }
        return writes
    }

    /// Inserts channels from a JSON array of ``NewChannel``s (`$1`) at `$2`, each one's tags a `TAG_CHANGE` event; returns
    /// the ids inserted.
    struct InsertChannels: JSONRowsStatement {
        static let sql = """
            WITH input AS (
                SELECT * FROM json_to_recordset($1::json) AS r (
                    app_id bigint, channel_id uuid, push_address text, opt_in boolean, background boolean,
                    frequent_pushes_enabled boolean, alias text, timezone text, locale_language text,
                    locale_country text, badge integer, quiet_time jsonb, tags json)),
            created AS (
                INSERT INTO channels (app_id, channel_id, push_address, opt_in, background, frequent_pushes_enabled,
                                      alias, timezone, locale_language, locale_country, badge, quiet_time,
                                      created_at, last_registration)
                SELECT app_id, channel_id, push_address, coalesce(opt_in, false), coalesce(background, false),
                       coalesce(frequent_pushes_enabled, false), alias, timezone, locale_language, locale_country,
                       badge, quiet_time, $2, $2
                FROM input
                ON CONFLICT (app_id, push_address) WHERE push_address IS NOT NULL DO NOTHING
                RETURNING app_id, channel_id),
            tagged AS (
                INSERT INTO channel_tags (app_id, tag_group, tag, channel_id)
                SELECT created.app_id, tag."group", tag.tag, created.channel_id
                FROM created JOIN input USING (app_id, channel_id),
                     json_to_recordset(input.tags) AS tag ("group" text, tag text)),
            -- A channel created with tags: its TAG_CHANGE, every tag added (TagWriter).
            changed AS (
                INSERT INTO events (app_id, type, occurred_at, channel_id, body)
                SELECT created.app_id, '\(EventType.tagChange.rawValue)', $2, created.channel_id,
                       jsonb_build_object('add', groups.tags, 'current', groups.tags)
                FROM created JOIN input USING (app_id, channel_id),
                     LATERAL (SELECT jsonb_object_agg("group", tags) AS tags FROM (
                                  SELECT tag."group", jsonb_agg(tag.tag ORDER BY tag.tag) AS tags
                                  FROM json_to_recordset(input.tags) AS tag ("group" text, tag text) GROUP BY tag."group") AS g) AS groups
                WHERE groups.tags IS NOT NULL)
            SELECT channel_id FROM created
            """
        var rows: String
        var now: Date

        func decodeRow(_ row: PostgresRow) throws -> UUID { try row.decode(UUID.self) }
    }

    /// Sets update tokens from a JSON array of ``ActivityToken``s (`$1`) at `$2`; returns, for each row whose channel is
    /// in its app, what the write did (``ActivityTokenWrite``).
    ///
    /// A token releases the activity awaiting it under the name when the activity started no earlier than the start
    /// was sent less ``AwaitingToken/allowedClockSkew``, within the activity's lifetime: the awaiting row goes, and the
    /// push held on it is queued in held_releases for a worker, in this statement. The awaiting row is apart from the
    /// last-writer-wins columns, which the release neither reads nor writes.
    ///
    /// An activity that becomes active (one the channel did not have active under the name) is a
    /// `LIVE_ACTIVITY_ACTIVE` event, and is due to expire 8 hours after its start (`due_at`); a new token of an active
    /// activity is neither.
    struct SetActivityTokens: JSONRowsStatement {
        static let sql = """
            WITH input AS (
                SELECT * FROM json_to_recordset($1::json) AS r (
                    app_id bigint, channel_id uuid, name text, activity_id text, token text,
                    started_at double precision, action_ts_ms bigint)),
            valid AS (
                -- One index probe per row, however many channels the app has.
                SELECT input.* FROM input,
                     LATERAL (SELECT 1 FROM channels c
                              WHERE c.app_id = input.app_id AND c.channel_id = input.channel_id LIMIT 1) AS found),
            upserted AS (
                INSERT INTO live_activities (app_id, channel_id, name, activity_id, token, state, started_at,
                                             action_ts_ms, updated_at, due_at, activated_at)
                SELECT app_id, channel_id, name, activity_id, token, 'active', to_timestamp(started_at),
                       action_ts_ms, $2, to_timestamp(started_at) + interval '\(Int(LiveActivityLifetime.updatable)) seconds',
                       statement_timestamp()
                FROM valid
                ON CONFLICT (app_id, channel_id, name) DO UPDATE SET
                    activity_id = EXCLUDED.activity_id,
                    token = EXCLUDED.token,
                    state = CASE WHEN live_activities.state = 'ended'
                                  AND live_activities.activity_id = EXCLUDED.activity_id
                                 THEN 'ended' ELSE 'active' END,
                    ended_at = CASE WHEN live_activities.activity_id = EXCLUDED.activity_id
                                    THEN live_activities.ended_at END,
                    dismiss_at = CASE WHEN live_activities.activity_id = EXCLUDED.activity_id
                                      THEN live_activities.dismiss_at END,
                    due_at = CASE WHEN live_activities.state = 'ended' AND live_activities.activity_id = EXCLUDED.activity_id
                                  THEN live_activities.due_at ELSE EXCLUDED.due_at END,
                    -- Kept for a new token of the same activity, active or ended; else it becomes active now.
                    activated_at = CASE WHEN live_activities.state IN ('active', 'ended')
                                         AND live_activities.activity_id = EXCLUDED.activity_id
                                        THEN live_activities.activated_at ELSE EXCLUDED.activated_at END,
                    started_at = EXCLUDED.started_at,
                    action_ts_ms = EXCLUDED.action_ts_ms,
                    updated_at = EXCLUDED.updated_at
                WHERE live_activities.action_ts_ms <= EXCLUDED.action_ts_ms
                -- xmax is 0 on a row the insert created: the first activity of the name on the channel.
                RETURNING app_id, channel_id, name, activity_id, state, started_at, updated_at, xmax = 0 AS created,
                          activated_at = statement_timestamp() AS activated),
            became AS (
                SELECT app_id, channel_id, name, activity_id, updated_at AS occurred_at, NULL::uuid AS push_id,
                       \(EventLog.date("started_at")) AS started_at
                FROM upserted WHERE state = 'active' AND activated),
            activated AS (
                \(EventLog.activityEvents(.liveActivityActive, from: "became", details: ", 'started_at', started_at"))),
            awaited AS (
                DELETE FROM awaiting_activities a USING valid
                WHERE a.app_id = valid.app_id AND a.channel_id = valid.channel_id AND a.name = valid.name
                  AND a.state = 'awaiting' AND a.sent_at > $2 - interval '\(Int(LiveActivityLifetime.updatable)) seconds'
                  AND to_timestamp(valid.started_at) >= a.sent_at - interval '\(Int(AwaitingToken.allowedClockSkew)) seconds'
                RETURNING a.app_id, a.channel_id, a.name, a.held_push_id, valid.token),
            released AS (
                INSERT INTO held_releases (app_id, channel_id, name, push_id, token, released_at)
                SELECT app_id, channel_id, name, held_push_id, token, $2 FROM awaited WHERE held_push_id IS NOT NULL
                ON CONFLICT (app_id, channel_id, name) DO UPDATE SET
                    push_id = EXCLUDED.push_id, token = EXCLUDED.token, released_at = EXCLUDED.released_at,
                    attempts = 0, claimed_by = NULL, lease_expires_at = NULL
                RETURNING app_id, channel_id, name)
            SELECT \(Written.Column.selectList) FROM valid v
            """
        var rows: String
        var now: Date

        /// One row of the result: the activity and what its write did.
        struct Written {
            var appID: Int64
            var channelID: UUID
            var name: String
            var write: ActivityTokenWrite

            /// What the statement selects of each valid row (`v`), each column by name.
            enum Column: String, SelectedColumn {
                case appID = "app_id", channelID = "channel_id", name, awaited, created, released

                var expression: String {
                    switch self {
                    case .appID, .channelID, .name: "v.\(self.rawValue)"
                    // Uncorrelated IN, hashed once: a join or a correlated EXISTS over a CTE was planned as a loop over
                    // the batch for every row, which cost registration a fifth of its throughput.
                    case .awaited: "(v.app_id, v.channel_id, v.name) IN (SELECT app_id, channel_id, name FROM awaited)"
                    case .created: "(v.app_id, v.channel_id, v.name) IN (SELECT app_id, channel_id, name FROM upserted WHERE created)"
                    case .released: "(v.app_id, v.channel_id, v.name) IN (SELECT app_id, channel_id, name FROM released)"
                    }
                }
            }

            init(_ row: NamedRow<Column>) throws(UnreadableColumn) {
                self.appID = try row.decode(.appID)
                self.channelID = try row.decode(.channelID)
                self.name = try row.decode(.name)
                self.write = ActivityTokenWrite(
                    found: true, awaited: try row.decode(.awaited), created: try row.decode(.created), released: try row.decode(.released))
            }
        }

        func decodeRow(_ row: PostgresRow) throws -> Written { try Written(NamedRow(row)) }
    }

    /// A channel of an app.
    private struct ChannelKey: Hashable {
        var appID: Int64
        var channelID: UUID

        init(appID: Int64, channelID: UUID) {
            self.appID = appID
            self.channelID = channelID
        }

        init(_ token: ActivityToken) {
            self.init(appID: token.appID, channelID: token.channelID)
        }
    }

    /// An activity name on a channel: one row of `live_activities`.
    private struct ActivityKey: Hashable {
        var channel: ChannelKey
        var name: String
    }

    /// The indexes of `keys` in rounds where no key repeats; a key's later occurrences go in later rounds.
    static func rounds<Key: Hashable>(_ keys: [Key]) -> [[Int]] {
        var rounds: [[Int]] = []
        var seen: [Key: Int] = [:]
        for (index, key) in keys.enumerated() {
            let round = seen[key, default: 0]
            seen[key] = round + 1
            if round == rounds.count { rounds.append([]) }
            rounds[round].append(index)
        }
        return rounds
    }
}

/// A statement over rows sent as one JSON array (`$1`) at one time (`$2`).
protocol JSONRowsStatement: PostgresPreparedStatement {
    var rows: String { get }
    var now: Date { get }
}

extension JSONRowsStatement {
    func makeBindings() -> PostgresBindings {
        var bindings = PostgresBindings()
        bindings.append(self.rows)
        bindings.append(self.now)
        return bindings
    }
}
