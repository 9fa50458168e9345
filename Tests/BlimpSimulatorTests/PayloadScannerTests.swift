@testable import BlimpSimulator
import Testing

/// The request path's JSON reader: well-formed objects with an `aps` object pass, anything else does not.
@Suite struct PayloadScannerTests {
    static let wellFormed = [
        #"{"aps":{}}"#,
        #" {"aps" : { "alert" : "hi" } , "custom": [1, -2.5e3, true, false, null, "\u00e9\n"]} "#,
        #"{"a":{"b":{"c":[]}},"aps":{"content-available":1}}"#,
        #"{"aps":{"event":"update","timestamp":1.7e9,"content-state":{"s":"\"q\""}}}"#,
    ]

    static let malformed = [
        "", "[]", #""aps""#, "{}", #"{"aps":1}"#, #"{"aps":[]}"#, #"{"aps":{}"#, #"{"aps":{}}}"#, #"{"aps":{},}"#,
        #"{"aps":{"a":}}"#, #"{"aps":{"a":01.}}"#, #"{"aps":{"a":tru}}"#, #"{"aps":{"a":"\x"}}"#,
        #"{"aps":{"a":"\u12"}}"#, "{\"aps\":{\"a\":\"line\nbreak\"}}", #"{aps:{}}"#, #"{"aps":{}} {}"#,
        String(repeating: "[", count: 100) + String(repeating: "]", count: 100),
    ]

    @Test(arguments: Self.wellFormed)
    func wellFormedPayloadsPass(_ text: String) {
        #expect(PayloadScanner.aps(in: Array(text.utf8)) != nil)
    }

    @Test(arguments: Self.malformed)
    func malformedPayloadsAreRefused(_ text: String) {
        #expect(PayloadScanner.aps(in: Array(text.utf8)) == nil)
    }

    @Test func theKeysTheDeviceReadsAreNoted() throws {
        let text = #"{"aps":{"event":"start","timestamp":1700000000,"content-state":{},"attributes-type":"S","#
            + #""attributes":{"a":1},"alert":"Go"}}"#
        let aps = try #require(PayloadScanner.aps(in: Array(text.utf8)))
        #expect(aps.event.map { String(decoding: $0, as: UTF8.self) } == "start")
        #expect(aps.timestamp == 1_700_000_000)
        #expect(aps.contentState == .object)
        #expect(aps.attributesType == .string)
        #expect(aps.attributes == .object)
        #expect(aps.alert == .string)
    }
}
