import BlimpStore
import BlimpTestSupport
import Synchronization
import Testing

/// api replicas share the janitor's round through the `janitor` lease (``DeploymentLeases``): a janitor does
/// nothing while another process holds it, and takes over once it is given up or lapses.
@Suite(.enabled(if: TestDatabase.isEnabled)) struct JanitorTests {
    @Test func aLeaseHasOneHolderUntilItIsGivenUpOrLapses() async throws {
        try await TestDatabase.withFreshDatabase { _, client in
            let leases = DeploymentLeases(client: client, logger: TestDatabase.logger)
            #expect(try await leases.hold("chore", holder: "a", for: .seconds(60)))
            #expect(try await !leases.hold("chore", holder: "b", for: .seconds(60)))
            #expect(try await leases.hold("chore", holder: "a", for: .milliseconds(300)))
            #expect(try await leases.hold("other", holder: "b", for: .seconds(60)))
            try await Task.sleep(for: .milliseconds(600))
            #expect(try await leases.hold("chore", holder: "b", for: .seconds(60)))
            #expect(try await !leases.hold("chore", holder: "a", for: .seconds(60)))
            try await leases.release("chore", holder: "b")
            #expect(try await leases.hold("chore", holder: "a", for: .seconds(60)))
        }
    }

    @Test func aJanitorWaitsWhileAnotherProcessHoldsTheLease() async throws {
        try await TestDatabase.withFreshDatabase { _, client in
            let leases = DeploymentLeases(client: client, logger: TestDatabase.logger)
            #expect(try await leases.hold("janitor", holder: "another api", for: .seconds(60)))
            let rounds = Mutex(0)
            let janitor = Janitor(
                [.init("rounds") { _ in rounds.withLock { $0 += 1 }; return 0 }], leases: leases, logger: TestDatabase.logger,
                interval: .milliseconds(100))
            let running = Task { try await janitor.run() }
            defer { running.cancel() }
            try await Task.sleep(for: .seconds(1))
            #expect(rounds.withLock { $0 } == 0)
            try await leases.release("janitor", holder: "another api")
            let deadline = ContinuousClock.now + .seconds(30)
            while rounds.withLock({ $0 }) == 0, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(50)) }
            #expect(rounds.withLock { $0 } > 0)
        }
    }
}
