import NIOHPACK
import Testing

@testable import BlimpSimulator

/// HTTP/2's own rules for a request's header block (RFC 9113 §8.2, §8.3), checked before APNs's.
@Suite struct RequestHeaderBlockTests {
    private static let valid: [(String, String)] = [
        (":method", "POST"), (":scheme", "https"), (":authority", "api.push.apple.com"),
        (":path", "/3/device/abcd"), ("apns-topic", "com.example.demo"), ("authorization", "bearer x"),
    ]

    @Test func aWellFormedBlockGivesMethodPathAndRegularHeadersInOrder() throws {
        let block = try RequestHeaderBlock(HPACKHeaders(Self.valid))
        #expect(block.method == "POST")
        #expect(block.path == "/3/device/abcd")
        #expect(block.headers.map(\.name) == ["apns-topic", "authorization"])
    }

    private static let pseudo: [(String, String)] = [(":method", "POST"), (":scheme", "https"), (":path", "/")]

    /// Each problem, and a block that has it.
    private static let malformed: [(String, [(String, String)])] = [
        ("a pseudo-header after a regular one", [(":method", "POST"), ("apns-topic", "t"), (":scheme", "https"), (":path", "/")]),
        ("a repeated pseudo-header", Self.pseudo + [(":method", "GET")]),
        ("an unknown pseudo-header", Self.pseudo + [(":status", "200")]),
        ("no :path", [(":method", "POST"), (":scheme", "https")]),
        ("no :scheme", [(":method", "POST"), (":path", "/")]),
        ("an upper-case name", Self.pseudo + [("APNs-Topic", "t")]),
        ("a connection-specific header", Self.pseudo + [("connection", "keep-alive")]),
        ("te other than trailers", Self.pseudo + [("te", "gzip")]),
        ("a line break in a value", Self.pseudo + [("apns-topic", "a\r\nb")]),
        ("surrounding whitespace in a value", Self.pseudo + [("apns-topic", " t")]),
    ]

    @Test(arguments: Self.malformed)
    func aMalformedBlockIsRejected(_ problem: String, _ headers: [(String, String)]) {
        #expect(throws: RequestHeaderBlock.Malformed.self, "\(problem)") { try RequestHeaderBlock(HPACKHeaders(headers)) }
    }
}
