import AsyncHTTPClient
import BlimpAPNs
import BlimpCore
import BlimpTestSupport
import Foundation
import Testing

/// `blimp apns-sim` as a real process: the client over TLS with the CA it created, and its admin endpoint.
@Suite struct APNsSimCommandTests {
    @Test func servesTrustedKeysAndIsControlledThroughItsAdminEndpoint() async throws {
        try await withTemporaryFolder { folder in
            // setup
            let pem = TestKeys.p8()
            let keyFile = folder.appendingPathComponent("AuthKey_ABC123DEFG.p8").path
            try pem.write(toFile: keyFile, atomically: true, encoding: .utf8)
            let (port, adminPort) = (freePort(), freePort())
            let sim = try BlimpProcess([
                "apns-sim", "--port", "\(port)", "--admin-port", "\(adminPort)", "--state-dir", folder.path,
                "--trust-key", "ABC123DEFG:DEF123GHIJ:\(keyFile)",
            ])
            let admin = "http://127.0.0.1:\(adminPort)"
            try await waitUntilServing("\(admin)/counters")
            let client = try APNsClient(
                configuration: APNsClientConfiguration(
                    endpoint: try APNsEndpointSettings(
                        overrideURL: "https://127.0.0.1:\(port)",
                        caFile: folder.appendingPathComponent("ca.pem").path
                    )
                ),
                logger: TestDatabase.logger
            )
            let key = try APNsSigningKey(pem: pem, keyID: "ABC123DEFG", teamID: "DEF123GHIJ")
            let token = String(repeating: "ab", count: 32)
            func update(_ timestamp: Int) -> APNsRequest {
                APNsRequest(
                    deviceToken: DeviceToken(token)!,
                    pushType: .liveActivity,
                    topic: "com.example.demo.push-type.liveactivity",
                    payload: Array(#"{"aps":{"timestamp":\#(timestamp),"event":"update","content-state":{"score":1}}}"#.utf8)
                )
            }

            // MUT + validate: accepted, then the device shows it.
            var first = update(1_700_000_000)
            first.apnsID = UUID()
            let firstID = first.apnsID!.uuidString.lowercased()
            // The simulator runs as the sandbox by default: the answer carries an apns-unique-id too.
            let answer = await client.send(first, key: key, environment: .production)
            guard case .accepted(firstID, let uniqueID?) = answer, UUID(uuidString: uniqueID) != nil else {
                Issue.record("not accepted as the sandbox answers: \(answer)")
                return
            }
            let device = try await get("\(admin)/devices/\(token)")
            #expect(device.0 == 200)
            #expect(device.1.contains(#""state":"active""#))
            #expect(device.1.contains(firstID))

            // The admin endpoint unregisters the token: the next push is 410 Unregistered with a timestamp.
            var request = HTTPClientRequest(url: "\(admin)/devices/\(token)")
            request.method = .PUT
            request.body = .bytes(Array(#"{"state":"unregistered"}"#.utf8))
            let changed = try await HTTPClient.shared.execute(request, timeout: .seconds(5))
            #expect(changed.status == .ok)
            let second = await client.send(update(1_700_000_100), key: key, environment: .production)
            guard case .rejected(410, .some(.unregistered), .some) = second else {
                Issue.record("expected 410 Unregistered with a timestamp, got \(second)")
                return
            }

            // A key it does not trust is refused.
            let stranger = try APNsSigningKey(pem: TestKeys.p8(), keyID: "ZZZ123DEFG", teamID: "DEF123GHIJ")
            #expect(await client.send(update(1_700_000_200), key: stranger, environment: .production) == .rejected(status: 403, reason: .invalidProviderToken, timestamp: nil))
            let counters = try await get("\(admin)/counters")
            #expect(counters.1.contains(#""accepted":1"#))

            await client.shutdown()
            sim.signal(SIGTERM)
            let result = await sim.wait()
            #expect(result.status == 0, "\(result.stderr)")
            #expect(result.stdout.contains("BLIMP_APNS_CA_FILE=\(folder.appendingPathComponent("ca.pem").path)"))
        }
    }

    /// `--tls-name` puts a host name in the certificate the simulator creates (deploy/compose.yaml's workers reach it as
    /// `apns-sim`): curl, trusting the created CA, completes a handshake under that name and fails under another; a
    /// later run asked for another name replaces the stored certificate.
    @Test func theCreatedCertificateNamesTheHostsGiven() async throws {
        try await withTemporaryFolder { folder in
            let (port, adminPort) = (freePort(), freePort())
            /// curl's exit status for a request to the simulator as `name`: 0 for any HTTP answer, 60 for a
            /// certificate that does not name it.
            func handshake(as name: String) async throws -> Int32 {
                try await ChildProcess.run("/usr/bin/curl", [
                    "-s", "-o", "/dev/null", "--http2", "--cacert", folder.appendingPathComponent("ca.pem").path,
                    "--resolve", "\(name):\(port):127.0.0.1", "https://\(name):\(port)/3/device/x",
                ]).status
            }
            for name in ["apns-sim.test", "other.test"] {
                let sim = try BlimpProcess([
                    "apns-sim", "--port", "\(port)", "--admin-port", "\(adminPort)", "--state-dir", folder.path, "--tls-name", name,
                ])
                try await waitUntilServing("http://127.0.0.1:\(adminPort)/counters")
                #expect(try await handshake(as: name) == 0)
                #expect(try await handshake(as: name == "other.test" ? "apns-sim.test" : "other.test") == 60)
                sim.signal(SIGTERM)
                #expect(await sim.wait().status == 0)
            }
        }
    }

    /// `--environment production` sends no `apns-unique-id`; `--channel-limit` bounds each bundle id's broadcast
    /// channels, which `GET /channels` lists.
    @Test func theEnvironmentAndChannelLimitAreFlags() async throws {
        try await withTemporaryFolder { folder in
            let pem = TestKeys.p8()
            let keyFile = folder.appendingPathComponent("AuthKey_ABC123DEFG.p8").path
            try pem.write(toFile: keyFile, atomically: true, encoding: .utf8)
            let (port, adminPort) = (freePort(), freePort())
            let sim = try BlimpProcess([
                "apns-sim", "--port", "\(port)", "--admin-port", "\(adminPort)", "--state-dir", folder.path,
                "--trust-key", "ABC123DEFG:DEF123GHIJ:\(keyFile)", "--environment", "production", "--channel-limit", "1",
            ])
            let admin = "http://127.0.0.1:\(adminPort)"
            try await waitUntilServing("\(admin)/counters")
            let endpoint = try APNsEndpointSettings(
                overrideURL: "https://127.0.0.1:\(port)", caFile: folder.appendingPathComponent("ca.pem").path)
            let client = try APNsClient(configuration: APNsClientConfiguration(endpoint: endpoint), logger: TestDatabase.logger)
            let broadcasts = try APNsBroadcastClient(endpoint: endpoint, logger: TestDatabase.logger)
            let key = try APNsSigningKey(pem: pem, keyID: "ABC123DEFG", teamID: "DEF123GHIJ")

            let push = APNsRequest(
                deviceToken: DeviceToken(String(repeating: "cd", count: 32))!, pushType: .liveActivity,
                topic: "com.example.demo.push-type.liveactivity",
                payload: Array(#"{"aps":{"timestamp":1700000000,"event":"update","content-state":{"score":1}}}"#.utf8))
            let answer = await client.send(push, key: key, environment: .production)
            let channel = try? await broadcasts.create(
                storagePolicy: .mostRecentMessageStored, bundleID: "com.example.demo", key: key, environment: .production)
            var refused: APNsBroadcastError?
            do throws(APNsBroadcastError) {
                _ = try await broadcasts.create(storagePolicy: .noMessageStored, bundleID: "com.example.demo", key: key, environment: .production)
            } catch {
                refused = error
            }
            let channels = try await get("\(admin)/channels")
            await client.shutdown()
            await broadcasts.shutdown()
            sim.signal(SIGTERM)
            #expect(await sim.wait().status == 0)

            guard case .accepted(_, nil) = answer else {
                Issue.record("not accepted without apns-unique-id: \(answer)")
                return
            }
            #expect(refused == .rejected(status: 400, reason: .cannotCreateChannelConfig))
            let id = try #require(channel)
            #expect(channels.0 == 200)
            let listed = try JSONSerialization.jsonObject(with: Data(channels.1.utf8)) as? [[String: Any]]
            #expect(listed?.map { $0["id"] as? String } == [id], "\(channels.1)")
            #expect(listed?.first?["storage_policy"] as? Int == 1 && listed?.first?["subscribers"] as? Int == 0, "\(channels.1)")
        }
    }

    @Test func aMalformedTrustKeyIsOneLine() async throws {
        let result = try await BlimpProcess.run(["apns-sim", "--trust-key", "ABC123DEFG-no-team"])
        #expect(result.status != 0)
        #expect(result.stderr == "blimp: --trust-key takes KEY_ID:TEAM_ID:path (got \"ABC123DEFG-no-team\")\n")
    }
}
