import Foundation
import PostgresNIO

/// Why a store operation failed, in one line without secrets.
public enum StoreError: Error, Equatable, CustomStringConvertible {
    /// What was asked for is not in this app (whether it exists in another is never told).
    case notFound
    case database(reason: String)
    /// A claimed push whose row cannot be sent (the store has already failed it, so its name goes on).
    case unreadablePush(appID: Int64, pushID: UUID, reason: String)

    public var description: String {
        switch self {
        case .notFound: "not found"
        case .database(let reason): "database error: \(reason)"
        case .unreadablePush(_, let pushID, let reason): "push \(pushID.uuidString.lowercased()) cannot be read: \(reason)"
        }
    }

    /// Runs `body`, turning database errors into ``StoreError``s; a foreign-key violation means the channel is
    /// not in the app.
    static func mapping<T>(_ body: () async throws -> T) async throws(StoreError) -> T {
        do {
            return try await body()
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
        default: .database(reason: DatabaseError.reason(for: error))
        }
    }
}
