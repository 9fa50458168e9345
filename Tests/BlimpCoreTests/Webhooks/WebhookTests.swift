import BlimpCore
import Foundation
import Testing

/// Webhooks' rules with no I/O: Standard Webhooks signatures, which endpoints and addresses are taken, the retry
/// schedule, and how a batch is cut from the log.
struct WebhookTests {
    /// The Standard Webhooks reference libraries' own vector (what the `standardwebhooks` package signs).
    @Test func signaturesAreStandardWebhooks() throws {
        let secret = WebhookSecret(bytes: try #require(Data(base64Encoded: "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")))
        let body = Data(#"{"test": 2432232314}"#.utf8)
        #expect(WebhookSignature.header(id: "msg_p5jXN8AQM9LWM0D4loKWxJek", timestamp: 1_614_265_330, body: body, secrets: [secret])
            == "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=")
        let next = WebhookSecret.make()
        let both = WebhookSignature.header(id: "msg_1", timestamp: 1, body: body, secrets: [next, secret]).split(separator: " ")
        #expect(both.count == 2 && both.allSatisfy { $0.hasPrefix("v1,") })
        #expect(next.text.hasPrefix("whsec_") && Data(base64Encoded: String(next.text.dropFirst(6)))?.count == 32)
    }

    @Test(arguments: [
        ("93.184.216.34", true), ("10.1.2.3", false), ("127.0.0.1", false), ("169.254.169.254", false), ("172.16.0.1", false),
        ("172.32.0.1", true), ("192.168.1.1", false), ("100.64.0.1", false), ("0.0.0.0", false), ("224.0.0.1", false),
        ("255.255.255.255", false), ("198.18.0.1", false), ("192.0.2.1", false),
    ])
    func ipv4AddressesArePublicOrNot(address: String, isPublic: Bool) {
        let bytes = address.split(separator: ".").map { UInt8($0)! }
        #expect(EndpointAddress.isPublic(bytes) == isPublic, "\(address)")
    }

    @Test func ipv6AddressesArePublicOrNot() {
        func bytes(_ groups: [UInt16]) -> [UInt8] { groups.flatMap { [UInt8($0 >> 8), UInt8($0 & 0xff)] } }
        #expect(EndpointAddress.isPublic(bytes([0x2606, 0x2800, 0x220, 1, 0x248, 0x1893, 0x25c8, 0x1946])))
        #expect(!EndpointAddress.isPublic(bytes([0, 0, 0, 0, 0, 0, 0, 1])))  // ::1
        #expect(!EndpointAddress.isPublic(bytes([0, 0, 0, 0, 0, 0, 0, 0])))  // ::
        #expect(!EndpointAddress.isPublic(bytes([0xfe80, 0, 0, 0, 0, 0, 0, 1])))
        #expect(!EndpointAddress.isPublic(bytes([0xfd00, 0, 0, 0, 0, 0, 0, 1])))
        #expect(!EndpointAddress.isPublic(bytes([0xff02, 0, 0, 0, 0, 0, 0, 1])))
        #expect(!EndpointAddress.isPublic(bytes([0, 0, 0, 0, 0, 0xffff, 0x7f00, 1])))  // ::ffff:127.0.0.1
        #expect(EndpointAddress.isPublic(bytes([0, 0, 0, 0, 0, 0xffff, 0x5db8, 0xd822])))  // ::ffff:93.184.216.34
        #expect(!EndpointAddress.isPublic([1, 2, 3]))
    }

    @Test func endpointsAreHTTPSWithAHostAndKnownTypes() throws {
        func request(_ json: String, plain: Bool = false) throws(InvalidField) -> WebhookEndpointRequest {
            try WebhookEndpointRequest(parsing: try! RawJSONParser.parse(Array(json.utf8)), allowsPlainHTTP: plain)
        }
        let all = try request(#"{"url": "https://hooks.example.com/blimp"}"#)
        #expect(all.url.absoluteString == "https://hooks.example.com/blimp" && all.types == nil)
        #expect(try request(#"{"url": "https://h.example.com", "types": ["send", "LIVE_ACTIVITY_ENDED"]}"#).types == [.send, .liveActivityEnded])
        #expect(try request(#"{"url": "http://127.0.0.1:8080/"}"#, plain: true).url.port == 8080)
        for (json, path) in [
            (#"{}"#, "url"), (#"{"url": "http://h.example.com"}"#, "url"), (#"{"url": "ftp://h.example.com"}"#, "url"),
            (#"{"url": "https://user:pw@h.example.com"}"#, "url"), (#"{"url": "/relative"}"#, "url"),
            (#"{"url": "https://h.example.com", "types": ["OPEN"]}"#, "types[0]"), (#"{"url": "https://h.example.com", "types": []}"#, "types"),
            (#"{"url": "https://h.example.com", "secret": "x"}"#, "secret"),
        ] {
            #expect(throws: InvalidField.self, "\(json)") { try request(json) }
            do { _ = try request(json) } catch { #expect(error.path == path, "\(json): \(error)") }
        }
    }

    @Test func retriesFollowTheScheduleWithJitterOrRetryAfter() throws {
        let schedule = try #require(WebhookRetrySchedule(parsing: "5s,5m,2h"))
        #expect(schedule.delays == [.seconds(5), .seconds(300), .seconds(7200)])
        #expect(schedule.delay(afterFailure: 1, jitter: 0) == .seconds(5))
        #expect(schedule.delay(afterFailure: 2, jitter: 0.2) == .seconds(360))
        #expect(schedule.delay(afterFailure: 9, jitter: -0.2) == .seconds(5760))
        #expect(schedule.delay(afterFailure: 1, retryAfter: .seconds(120)) == .seconds(120))
        #expect(schedule.delay(afterFailure: 1, retryAfter: .seconds(10 * 86_400)) == WebhookRetrySchedule.longestRetryAfter)
        for jitter in stride(from: -0.2, through: 0.2, by: 0.05) {
            let delay = schedule.delay(afterFailure: 1, jitter: jitter)
            #expect(delay >= .seconds(4) && delay <= .seconds(6))
        }
        // The default: an endpoint that comes back is tried within a minute, jitter and all.
        #expect(WebhookRetrySchedule.standard.delay(afterFailure: 100, jitter: 0.2) <= .seconds(60))
        #expect(WebhookRetrySchedule(parsing: "5s,20s,50s") == .standard)
        #expect(WebhookRetrySchedule(parsing: "") == nil && WebhookRetrySchedule(parsing: "5s,soon") == nil && WebhookRetrySchedule(parsing: "0s") == nil)
    }

    @Test func aBatchTakesItsTypesUpToAHundredAndCoversWhatItPassedOver() {
        func event(_ id: Int64, _ type: EventType) -> StreamedEvent {
            StreamedEvent(
                offset: EventOffset(transaction: 7, id: id), id: UUID(), type: type, occurredAt: Date(), processedAt: Date(), channelID: nil,
                namedUserID: nil, pushID: nil, body: .object([]))
        }
        let read = (1...250).map { event(Int64($0), $0 % 2 == 0 ? .send : .pushBody) }
        let sends = WebhookBatchPlan(from: read, types: [.send])
        // The hundredth SEND is event 200; event 201, of another type, is passed over with them.
        #expect(sends.events.count == 100 && sends.through == EventOffset(transaction: 7, id: 201))
        let all = WebhookBatchPlan(from: read, types: nil)
        #expect(all.events.count == 100 && all.through == EventOffset(transaction: 7, id: 100))
        let none = WebhookBatchPlan(from: read, types: [.uninstall])
        #expect(none.events.isEmpty && none.through == EventOffset(transaction: 7, id: 250))
        #expect(WebhookBatchPlan(from: [], types: nil).through == nil)
        let body = String(decoding: sends.body(at: Date(timeIntervalSince1970: 0)), as: UTF8.self)
        #expect(body.hasPrefix(#"{"type":"events","timestamp":"1970-01-01T00:00:00.000Z","data":[{"id":"#), "\(body.prefix(80))")
    }
}
