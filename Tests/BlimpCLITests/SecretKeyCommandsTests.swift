import BlimpCore
import BlimpStore
import BlimpTestSupport
import Foundation
import Testing

/// `blimp secret-key generate` and `rotate [--check]` as real processes, through a rotation from key A to key B.
@Suite(.enabled(if: TestDatabase.isEnabled)) struct SecretKeyCommandsTests {
    @Test func generatePrintsANewKeyEachTime() async throws {
        let first = try await BlimpProcess.run(["secret-key", "generate"])
        let second = try await BlimpProcess.run(["secret-key", "generate"])
        #expect(first.status == 0 && first.stderr.isEmpty, "\(first.stderr)")
        _ = try ServerKey(base64: first.stdout)
        #expect(first.stdout.hasSuffix("=\n") && first.stdout.count == 45 && first.stdout != second.stdout)
    }

    @Test func rotatingMovesEveryStoredSecretToTheNewKeyAndRefusesWhatNeitherKeyOpens() async throws {
        try await TestDatabase.withFreshDatabase { url, client in
            try await withTemporaryFolder { folder in
                let a = TestKeys.serverKeyBase64()
                let b = TestKeys.serverKeyBase64()
                func environment(_ key: String, previous: String? = nil) -> [String: String] {
                    ["DATABASE_URL": url, "BLIMP_SECRET_KEY": key].merging(previous.map { ["BLIMP_PREVIOUS_SECRET_KEY": $0] } ?? [:]) { $1 }
                }
                let created = try await BlimpProcess.createScores(in: folder, environment: environment(a)).credentials
                let appKey = created["app_key"]!
                let rotatedSecret = try await BlimpProcess.run(
                    ["apps", "rotate-app-secret", "--app-key", appKey, "--overlap", "1d"], environment: environment(a))
                #expect(rotatedSecret.status == 0, "\(rotatedSecret.stderr)")
                var outputs: [BlimpProcess.Result] = []

                // Every process on B with A as the previous key: three secrets to move (the contact-id key is
                // stored under B on first need).
                let pending = try await BlimpProcess.run(["secret-key", "rotate", "--check"], environment: environment(b, previous: a))
                outputs.append(pending)
                #expect(pending.status != 0)
                #expect(
                    pending.stdout == """
                        apps: 1, deployment secrets: 1
                        under BLIMP_SECRET_KEY: 1
                        under BLIMP_PREVIOUS_SECRET_KEY only: 3
                        under neither: 0

                        """)
                #expect(pending.stderr == "blimp: 3 stored secrets open with BLIMP_PREVIOUS_SECRET_KEY only: run blimp secret-key rotate\n")

                // Refused: no previous key, a malformed one, or one that did not seal them.
                let alone = try await BlimpProcess.run(["secret-key", "rotate"], environment: environment(b))
                #expect(alone.status != 0 && alone.stderr.hasPrefix("blimp: BLIMP_PREVIOUS_SECRET_KEY is not set"), "\(alone.stderr)")
                let malformed = try await BlimpProcess.run(["secret-key", "rotate"], environment: environment(b, previous: "abc"))
                #expect(malformed.stderr.hasPrefix("blimp: BLIMP_PREVIOUS_SECRET_KEY must be 32 bytes in base64"), "\(malformed.stderr)")
                let wrong = try await BlimpProcess.run(["secret-key", "rotate"], environment: environment(b, previous: TestKeys.serverKeyBase64()))
                outputs.append(wrong)
                #expect(wrong.status != 0 && wrong.stdout.isEmpty)
                #expect(
                    wrong.stderr.hasPrefix(
                        "blimp: the APNs key of app \(appKey), the app secret of app \(appKey), the previous app secret of app \(appKey) open with neither"),
                    "\(wrong.stderr)")
                let unchanged = try await BlimpProcess.run(["secret-key", "rotate", "--check"], environment: environment(b, previous: a))
                #expect(unchanged.stdout == pending.stdout)

                // rotate, in batches of one row.
                let rotated = try await BlimpProcess.run(["secret-key", "rotate", "--batch-size", "1"], environment: environment(b, previous: a))
                outputs.append(rotated)
                #expect(rotated.status == 0, "\(rotated.stderr)")
                #expect(rotated.stdout == "sealed again under BLIMP_SECRET_KEY: 3; already under it: 1 (apps: 1, deployment secrets: 1)\n")
                #expect(rotated.stderr == "next: an hour from now, run every process without BLIMP_PREVIOUS_SECRET_KEY\n")

                // B alone: nothing left under A, and the app's secrets open.
                let done = try await BlimpProcess.run(["secret-key", "rotate", "--check"], environment: environment(b))
                outputs.append(done)
                #expect(done.status == 0 && done.stderr.isEmpty, "\(done.stderr)")
                #expect(done.stdout.contains("under BLIMP_SECRET_KEY: 4\nunder BLIMP_PREVIOUS_SECRET_KEY only: 0\nunder neither: 0\n"))
                let stored = try await AppStore(client: client, logger: TestDatabase.logger).credentials(appKey: appKey, serverKey: try ServerKey(base64: b))
                #expect(stored?.role(of: created["app_secret"]!) == .device)

                for output in outputs {
                    for secret in [a, b, created["app_secret"]!, created["master_secret"]!] {
                        #expect(!output.stdout.contains(secret) && !output.stderr.contains(secret))
                    }
                }
            }
        }
    }
}
