import BlimpCore
import Foundation
import NIOPosix
import PostgresNIO
import _ConnectionPoolModule

/// Why a store operation failed, in one line without secrets.
public enum StoreError: Error, Equatable, CustomStringConvertible {
    /// What was asked for is not in this app (whether it exists in another is never told).
    case notFound
    /// No app has the key or id asked for.
    case noSuchApp
    /// Another app already has this name or app key, or the app another API token of this name (which of them, in
    /// words).
    case duplicate(String)
    /// A value the operation refuses, in words a caller can act on.
    case invalid(String)
    case database(reason: String)
    /// The database cannot be reached or is shedding load (connection refused or lost, too many connections, a
    /// statement timeout, the pool giving up): worth trying again shortly.
    case unavailable(reason: String)
    /// A deployment secret that does not open with the configured server keys, or is not what it should be.
    case unreadableSecret(SealedSecret, reason: String)

    public var description: String {
        switch self {
        case .notFound: "not found"
        case .noSuchApp: "no such app"
        case .duplicate(let what): "an app with this \(what) already exists"
        case .invalid(let reason): reason
        case .database(let reason): "database error: \(reason)"
        case .unavailable(let reason): "the database is unavailable: \(reason)"
        case .unreadableSecret(let secret, let reason): "\(secret) cannot be read: \(reason)"
        }
    }

    /// How long one store operation may take (waiting for a connection included) before it is given up as
    /// unavailable. A process whose statements all go through stores sets PostgreSQL's `statement_timeout` to it, so
    /// that a statement given up on does not run on in the server, holding its locks.
    public static let deadline: Duration = .seconds(30)

    /// Runs `body` within ``deadline`` (see ``withAbandoningTimeout(_:_:)``: a query stuck on a closed connection
    /// must not hold its caller forever), turning database errors into ``StoreError``s; a unique violation of a
    /// constraint in `duplicates` is ``duplicate(_:)`` with its words.
    static func mapping<T: Sendable>(
        _ body: @escaping @Sendable () async throws -> T, duplicates: [String: String] = [:]
    ) async throws(StoreError) -> T {
        do {
            return try await withAbandoningTimeout(Self.deadline, body)
        } catch {
            throw Self.from(error, duplicates: duplicates)
        }
    }

    /// Submits to a ``Coalescer``, turning database errors into ``StoreError``s. No deadline of its own: the flush
    /// has one, and a waiting submission leaves when its caller is cancelled.
    static func mapping<Input, Output>(
        _ input: Input, to coalescer: Coalescer<Input, Output>
    ) async throws(StoreError) -> Output {
        do {
            return try await coalescer.submit(input)
        } catch {
            throw Self.from(error)
        }
    }

    private static func from(_ error: any Error, duplicates: [String: String] = [:]) -> StoreError {
        switch error {
        case let error as StoreError: error
        case let error as PostgresTransactionError:
            if let inner = error.closureError ?? error.beginError ?? error.commitError { Self.from(inner, duplicates: duplicates) } else {
                .database(reason: "the transaction failed")
            }
        case let error as PSQLError where error.serverInfo?[.sqlState] == "23503":
            Self.missing[error.serverInfo?[.constraintName] ?? ""] ?? .database(reason: DatabaseError.reason(for: error))
        case let error as PSQLError where error.serverInfo?[.sqlState] == "23505":
            duplicates[error.serverInfo?[.constraintName] ?? ""].map(StoreError.duplicate) ?? .database(reason: DatabaseError.reason(for: error))
        case let error as TimeoutError: .unavailable(reason: "no answer from the database: \(error)")
        case let error as Abandoned: .unavailable(reason: "\(error)")
        case _ where Self.isUnavailable(error): .unavailable(reason: DatabaseError.reason(for: error))
        default: .database(reason: DatabaseError.reason(for: error))
        }
    }

    /// The foreign keys whose violation means that what a write names is not there: a channel or named user not in
    /// the app, or an app that is gone.
    private static let missing: [String: StoreError] = [
        "channel_tags_app_id_channel_id_fkey": .notFound,
        "live_activities_app_id_channel_id_fkey": .notFound,
        "push_to_start_tokens_app_id_channel_id_fkey": .notFound,
        "channels_app_id_named_user_id_fkey": .notFound,
        "named_user_tags_app_id_named_user_id_fkey": .notFound,
        "named_users_app_id_fkey": .noSuchApp,
        "api_tokens_app_id_fkey": .noSuchApp,
        "console_sessions_app_id_fkey": .noSuchApp,
    ]

    /// SQLSTATE classes and codes that mean "not now" rather than "wrong": connection exceptions (08), a write on a
    /// server that is read-only (25006: a standby, or a primary being demoted in a failover), too many connections
    /// (53300), a statement timeout (57014) and server shutdowns (57P01–57P03).
    private static let unavailableStates: Set<String> = ["25006", "53300", "57014", "57P01", "57P02", "57P03"]

    private static func isUnavailable(_ error: any Error) -> Bool {
        switch error {
        case let error as PSQLError:
            if let state = error.serverInfo?[.sqlState] { return state.hasPrefix("08") || Self.unavailableStates.contains(state) }
            return [.connectionError, .serverClosedConnection, .clientClosedConnection, .uncleanShutdown, .poolClosed].contains(error.code)
        // The pool's own errors (its circuit breaker after failed connection attempts, a cancelled lease) and socket errors.
        case is ConnectionPoolError, is NIOConnectionError, is CancellationError: return true
        default: return false
        }
    }
}
