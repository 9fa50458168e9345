@testable import BlimpAPNs
import BlimpCore
import NIOCore
import NIOHPACK
import Testing

/// The request header encoder against swift-nio-http2's HPACK decoder: every block decodes to the request's headers,
/// across provider-token changes (table evictions) and table resizes announced by the server.
@Suite struct RequestHeaderEncoderTests {
    @Test func blocksDecodeToTheRequestsHeadersThroughTokenChangesAndTableResizes() throws {
        var encoder = RequestHeaderEncoder()
        var decoder = HPACKDecoder(allocator: ByteBufferAllocator())
        for index in 0..<300 {
            switch index {
            case 100: encoder.setPeerTableSize(300)  // room for one provider token at a time
            case 200: encoder.setPeerTableSize(0)  // no table at all: everything literal
            case 250: encoder.setPeerTableSize(4096)
            default: break
            }
            var request = APNsRequest(
                deviceToken: DeviceToken(String(repeating: "0", count: 60) + String(format: "%04x", index))!,
                pushType: index % 3 == 0 ? .alert : .liveActivity,
                topic: index % 3 == 0 ? "com.example.demo" : "com.example.demo.push-type.liveactivity",
                priority: index % 2 == 0 ? .immediate : .conservingPower,
                payload: []
            )
            if index % 7 == 0 { request.expiration = 1_700_000_000 + Int64(index) }
            if index % 11 == 0 { request.collapseID = "score-\(index)" }
            let authorization = "bearer " + String(repeating: "j", count: 180) + ".\(index / 40)"  // a new token every 40
            let apnsID = "00000000-0000-4000-8000-\(String(format: "%012d", index))"

            var block = ByteBuffer()
            encoder.encode(request, authority: "api.push.apple.com", authorization: authorization, apnsID: apnsID, into: &block)
            let size = block.readableBytes
            let decoded = try decoder.decodeHeaders(from: &block)

            var expected: [(String, String)] = [
                (":method", "POST"), (":scheme", "https"), (":authority", "api.push.apple.com"),
                (":path", "/3/device/\(request.deviceToken.hex)"), ("authorization", authorization),
                ("apns-push-type", request.pushType.rawValue), ("apns-topic", request.topic),
                ("apns-priority", String(request.priority.rawValue)), ("apns-id", apnsID),
            ]
            if let expiration = request.expiration { expected.append(("apns-expiration", String(expiration))) }
            if let collapseID = request.collapseID { expected.append(("apns-collapse-id", collapseID)) }
            expected.append(("content-type", "application/json"))
            #expect(decoded.map { "\($0.name): \($0.value)" } == expected.map { "\($0.0): \($0.1)" }, "request \(index)")
            // With the full table, a request whose repeating headers are all known costs the path, the apns-id and
            // a few bytes more.
            if (1..<100).contains(index), index % 40 != 0, index % 7 != 0, index % 11 != 0, index > 6 {
                #expect(size < 140, "request \(index) took \(size) bytes")
            }
        }
    }
}
