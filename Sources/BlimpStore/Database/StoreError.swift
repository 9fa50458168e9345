import BlimpCore
import Foundation
import PostgresNIO

/// Why a store operation failed, in one line without secrets.
public enum StoreError: Error, Equatable, CustomStringConvertible {
    /// What was asked for is not in this app (whether it exists in another is never told).
    case notFound
    case database(reason: String)
    /// The database cannot be reached or is shedding load (connection refused or lost, too many connections, a
    /// statement timeout, the pool giving up): worth trying again shortly.
    case unavailable(reason: String)
    /// A claimed push whose row cannot be sent (the store has already failed it, so its name goes on).
    case unreadablePush(appID: Int64, pushID: UUID, reason: String)
    /// A deployment secret that does not open with the configured server keys, or is not what it should be.
    case unreadableSecret(SealedSecret, reason: String)

    public var description: String {
        switch self {
        case .notFound: "not found"
        case .database(let reason): "database error: \(reason)"
        case .unavailable(let reason): "the database is unavailable: \(reason)"
        case .unreadablePush(_, let pushID, let reason): "push \(pushID.uuidString.lowercased()) cannot be read: \(reason)"
        case .unreadableSecret(let secret, let reason): "\(secret) cannot be read: \(reason)"
        }
    }

    /// How long one store operation may take (waiting for a connection included) before it is given up as
    /// unavailable.
    static let deadline: Duration = .seconds(30)

    /// Runs `body` within ``deadline`` (see ``withAbandoningTimeout(_:_:)``: a query stuck on a closed connection
    /// must not hold its caller forever), turning database errors into ``StoreError``s; a foreign-key violation
    /// means the channel is not in the app.
    static func mapping<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) async throws(StoreError) -> T {
        do {
            return try await withAbandoningTimeout(Self.deadline, body)
        } catch {
            throw Self.from(error)
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

    private static func from(_ error: any Error) -> StoreError {
        switch error {
        case let error as StoreError: error
        case let error as PostgresTransactionError:
            if let inner = error.closureError ?? error.beginError ?? error.commitError { Self.from(inner) } else {
                .database(reason: "the transaction failed")
            }
        case let error as PSQLError where error.serverInfo?[.sqlState] == "23503": .notFound
        case let error as TimeoutError: .unavailable(reason: "no answer from the database: \(error)")
        case _ where Self.isUnavailable(error): .unavailable(reason: DatabaseError.reason(for: error))
        default: .database(reason: DatabaseError.reason(for: error))
        }
    }

    /// SQLSTATE classes and codes that mean "not now" rather than "wrong": connection exceptions (08), too many
    /// connections (53300), a statement timeout (57014) and server shutdowns (57P01–57P03).
    private static let unavailableStates: Set<String> = ["53300", "57014", "57P01", "57P02", "57P03"]

    private static func isUnavailable(_ error: any Error) -> Bool {
        if let error = error as? PSQLError {
            if let state = error.serverInfo?[.sqlState] { return state.hasPrefix("08") || Self.unavailableStates.contains(state) }
            return [.connectionError, .serverClosedConnection, .clientClosedConnection, .uncleanShutdown, .poolClosed].contains(error.code)
        }
        // The pool's own errors (its circuit breaker after failed connection attempts, a lease timeout) and socket errors.
        let type = String(describing: Swift.type(of: error))
        return type.contains("ConnectionPoolError") || type.contains("NIOConnectionError") || error is CancellationError
    }
}
