import BlimpCore
import BlimpTestSupport
import Foundation
import PostgresNIO
import Testing

@testable import BlimpStore

@Suite(.enabled(if: TestDatabase.isEnabled)) struct NonceLedgerTests {
    /// Of many concurrent requests with one nonce (coalesced into shared batches), exactly one is its first use; the
    /// same nonce in another app is that app's own.
    @Test func aNonceIsUsedOncePerApp() async throws {
        try await TestDatabase.withFreshDatabase { _, client in
            let ledger = NonceLedger(client: client, logger: TestDatabase.logger)
            let (replayed, expiresAt) = (UUID(), Date().addingTimeInterval(3600))
            let firsts = try await withThrowingTaskGroup(of: Bool.self) { group in
                for index in 0..<200 {
                    group.addTask {
                        try await ledger.firstUse(appID: 1, nonce: index % 2 == 0 ? replayed : UUID(), expiresAt: expiresAt)
                    }
                }
                return try await group.reduce(into: [Bool]()) { $0.append($1) }
            }
            #expect(firsts.count(where: { $0 }) == 101)
            #expect(try await ledger.firstUse(appID: 2, nonce: replayed, expiresAt: expiresAt))
            #expect(try await !ledger.firstUse(appID: 2, nonce: replayed, expiresAt: expiresAt))
        }
    }

    /// Nonces are kept until their signature's window has passed (and a margin for clocks), then deleted.
    @Test func expiredNoncesAreDeleted() async throws {
        try await TestDatabase.withFreshDatabase { _, client in
            let appID = try await TestApps.create(named: "Scores", in: client, serverKey: ServerKey.generate().key).app.id
            let ledger = NonceLedger(client: client, logger: TestDatabase.logger)
            let (old, recent, live) = (UUID(), UUID(), UUID())
            _ = try await ledger.firstUse(appID: appID, nonce: old, expiresAt: Date().addingTimeInterval(-7200))
            _ = try await ledger.firstUse(appID: appID, nonce: recent, expiresAt: Date().addingTimeInterval(-60))
            _ = try await ledger.firstUse(appID: appID, nonce: live, expiresAt: Date().addingTimeInterval(3600))
            #expect(try await ledger.deleteExpired(budget: .seconds(10)) == 1)
            #expect(try await ledger.firstUse(appID: appID, nonce: old, expiresAt: Date().addingTimeInterval(3600)))
            #expect(try await !ledger.firstUse(appID: appID, nonce: recent, expiresAt: Date().addingTimeInterval(3600)))
        }
    }
}
