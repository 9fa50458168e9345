import AsyncHTTPClient
import BlimpStore
import BlimpTestSupport
import Foundation
import HTTPTypes
import HummingbirdTesting
import NIOCore
import Testing

@testable import BlimpAPI

/// `POST /api/events` at the API: who may open a stream, the answers to bodies it cannot read and to offsets past the
/// retention, and a stream read over a real connection up to the blank line that says it has caught up.
@Suite(.enabled(if: TestDatabase.isEnabled)) struct EventStreamAPITests {
    static let ndjson = "application/vnd.urbanairship+x-ndjson; version=3;"

    func fields(_ harness: APIHarness, accept: String = Self.ndjson, secret: String? = nil) -> HTTPFields {
        let credentials = "\(harness.scores.app.appKey):\(secret ?? harness.scores.credentials.masterSecret)"
        return APIHarness.fields([
            ("Authorization", "Basic " + Data(credentials.utf8).base64EncodedString()), ("Accept", accept),
            ("Content-Type", "application/json"),
        ])
    }

    @Test func onlyTheMasterSecretOrAnAPITokenOpensAStreamAndBadBodiesNameTheirField() async throws {
        try await APIHarness.run { harness, client in
            var answer = try await client.send(.post, "/api/events", self.fields(harness, secret: harness.scores.credentials.appSecret), "{}")
            #expect(answer.status == .unauthorized)
            answer = try await client.send(.post, "/api/events", self.fields(harness, accept: "application/json"), "{}")
            #expect(answer.status == .notAcceptable)
            for (body, path) in [
                (#"{"start": "SOON"}"#, "start"), (#"{"resume_offset": "x1"}"#, "resume_offset"),
                (#"{"filters": [{"types": ["OPEN"]}]}"#, "filters[0].types[0]"), (#"{"subset": {"type": "SAMPLE", "size": 3}}"#, "subset.size"),
            ] {
                answer = try await client.send(.post, "/api/events", self.fields(harness), body)
                #expect(answer.status == .badRequest, "\(body)")
                #expect((answer.body["details"] as? [String: Any])?["path"] as? String == path, "\(answer.body)")
            }
            // A reader whose next events the janitor deleted is told so.
            try await harness.database.query(
                "INSERT INTO event_trims (app_id, xid, id) VALUES (\(harness.scores.app.id), '5000', 7)", logger: TestDatabase.logger)
            answer = try await client.send(.post, "/api/events", self.fields(harness), #"{"resume_offset": "50000000000000000000006"}"#)
            #expect(answer.status == .badRequest)
            #expect((answer.body["details"] as? [String: Any])?["path"] as? String == "resume_offset", "\(answer.body)")
            answer = try await client.send(.post, "/api/events", self.fields(harness), #"{"start": "#)
            #expect(answer.status == .badRequest)
            #expect(answer.body["error"] as? String == "Could not parse request body.", "\(answer.body)")

            // Hostile bodies: too large, a NUL byte in a string and outside one, nesting deeper than any parser's
            // stack. Each is an Airship error, and the process serves on.
            let large = #"{"filters": [{"devices": [\#(Array(repeating: #"{"ios_channel": "6c1f0000-0000-0000-0000-000000000000"}"#, count: 2000).joined(separator: ","))]}]}"#
            answer = try await client.send(.post, "/api/events", self.fields(harness), large)
            #expect(answer.status == .contentTooLarge, "\(answer.status)")
            for body in ["{\"start\": \"EARL\u{0}IEST\"}", "{\"start\": \"EARLIEST\"}\u{0}", String(repeating: "[", count: 60_000)] {
                answer = try await client.send(.post, "/api/events", self.fields(harness), body)
                #expect(answer.status == .badRequest, "\(body.prefix(40)): \(answer.status)")
                #expect(answer.body["ok"] as? Bool == false, "\(answer.body)")
            }
            answer = try await client.send(.post, "/api/events", self.fields(harness, secret: harness.scores.credentials.appSecret), "{}")
            #expect(answer.status == .unauthorized)
        }
    }

    @Test func aStreamSendsTheAppsEventsAsNewlineDelimitedJSON() async throws {
        try await APIHarness.run(.live) { harness, client in
            let port = try #require(client.port)
            let push = #"{"audience": "all", "device_types": ["ios"], "notification": {"ios": {"live_activity": {"event": "update", "name": "match", "content_state": {"home": 1}}}}}"#
            let accepted = try await client.send(.post, "/api/push", harness.master(), push)
            #expect(accepted.status == .accepted)
            let pushID = try #require((accepted.body["push_ids"] as? [String])?.first)

            var request = HTTPClientRequest(url: "http://127.0.0.1:\(port)/api/events")
            request.method = .POST
            for field in self.fields(harness) { request.headers.add(name: field.name.rawName, value: field.value) }
            request.body = .bytes(ByteBuffer(string: #"{"start": "EARLIEST", "filters": [{"types": ["PUSH_BODY"]}]}"#))
            let response = try await HTTPClient.shared.execute(request, timeout: .seconds(60))
            #expect(response.status == .ok)
            #expect(response.headers["Content-Type"] == [Self.ndjson])
            // Lines up to the first blank one: the stream has caught up with what is committed.
            var text = ""
            for try await chunk in response.body {
                text += String(buffer: chunk)
                if text.hasPrefix("\n") || text.contains("\n\n") { break }
            }
            let lines = text.split(separator: "\n", omittingEmptySubsequences: true)
            #expect(lines.count == 1, "\(text)")
            let event = try #require(try JSONSerialization.jsonObject(with: Data(lines[0].utf8)) as? [String: Any], "\(text)")
            #expect(event["type"] as? String == "PUSH_BODY")
            #expect((event["body"] as? [String: Any])?["push_id"] as? String == pushID)
            #expect((event["offset"] as? String)?.allSatisfy(\.isNumber) == true)
            #expect((event["id"] as? String)?.count == 36)
            let occurred = try #require(event["occurred"] as? String)
            #expect(occurred.wholeMatch(of: /\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z/) != nil, "\(occurred)")
            #expect(event["device"] == nil)
        }
    }

    /// A stream whose filters leave out what it reads is sent where it has read to, so that its reader's offset moves.
    @Test func aFilteredStreamIsToldItsOffsetWhenItAsksForUpdates() async throws {
        try await APIHarness.run(.live) { harness, client in
            let port = try #require(client.port)
            var request = HTTPClientRequest(url: "http://127.0.0.1:\(port)/api/events")
            request.method = .POST
            for field in self.fields(harness) { request.headers.add(name: field.name.rawName, value: field.value) }
            request.body = .bytes(ByteBuffer(string: #"{"start": "LATEST", "enable_offset_updates": true, "filters": [{"types": ["UNINSTALL"]}]}"#))
            let response = try await HTTPClient.shared.execute(request, timeout: .seconds(60))
            #expect(response.status == .ok)
            let line = try await withThrowingTaskGroup(of: String?.self) { group in
                group.addTask {
                    var text = ""
                    var pushed = false
                    for try await chunk in response.body {
                        text += String(buffer: chunk)
                        // Caught up: a second later (updates go out at most once a second), a push the filter leaves out.
                        if !pushed, text.contains("\n") {
                            pushed = true
                            try await Task.sleep(for: .milliseconds(1100))
                            let push = #"{"audience": "all", "device_types": ["ios"], "notification": {"alert": "hi"}}"#
                            #expect(try await client.send(.post, "/api/push", harness.master(), push).status == .accepted)
                        }
                        if let update = text.split(separator: "\n").first(where: { $0.contains("OFFSET_UPDATE") }) { return String(update) }
                    }
                    return nil
                }
                group.addTask {
                    try await Task.sleep(for: .seconds(60))
                    return nil
                }
                let first = try await group.next() ?? nil
                group.cancelAll()
                return first
            }
            let update = try #require(try line.map { try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] } ?? nil)
            let offset = try #require(update["offset"] as? String)
            let events = try await EventLog(client: harness.database, logger: TestDatabase.logger)
                .events(appID: harness.scores.app.id, after: .start, limit: 10)
            #expect(events.map(\.type) == [.pushBody] && events.first?.offset.text == offset, "\(update)")
        }
    }

    @Test func anAppHasAFixedNumberOfStreamsOnEachProcess() {
        let slots = StreamSlots()
        var taken = (0..<StreamSlots.perApp).compactMap { _ in slots.take(appID: 1) }
        #expect(taken.count == StreamSlots.perApp)
        #expect(slots.take(appID: 1) == nil)
        #expect(slots.take(appID: 2) != nil)
        taken.removeFirst()
        let again = slots.take(appID: 1)
        #expect(again != nil)
        #expect(slots.take(appID: 1) == nil)
    }
}
