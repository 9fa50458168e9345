import NIOCore

/// The parts of HTTP/2's wire format (RFC 9113 §4, §6) and HPACK's (RFC 7541 §5) that Blimp's APNs client and the
/// APNs simulator need: both speak HTTP/2 directly over TLS, for one request shape, which costs about a third of
/// swift-nio-http2's general-purpose handler per request (docs/performance.md).
package enum HTTP2Wire {
    /// The client connection preface (RFC 9113 §3.4).
    package static let preface: StaticString = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
    /// The largest frame payload either side may send without a SETTINGS_MAX_FRAME_SIZE of its own (RFC 9113 §4.2).
    package static let defaultMaxFrameSize = 16_384
    /// The initial flow-control window of a connection and of each stream (RFC 9113 §6.9.2).
    package static let defaultWindowSize = 65_535

    package enum FrameType: UInt8 {
        case data = 0x0
        case headers = 0x1
        case priority = 0x2
        case rstStream = 0x3
        case settings = 0x4
        case pushPromise = 0x5
        case ping = 0x6
        case goAway = 0x7
        case windowUpdate = 0x8
        case continuation = 0x9
    }

    package struct Flags: OptionSet {
        package let rawValue: UInt8
        package init(rawValue: UInt8) { self.rawValue = rawValue }
        package static let endStream = Flags(rawValue: 0x1)
        package static let ack = Flags(rawValue: 0x1)
        package static let endHeaders = Flags(rawValue: 0x4)
        package static let padded = Flags(rawValue: 0x8)
        package static let priority = Flags(rawValue: 0x20)
    }

    package enum Setting: UInt16 {
        case headerTableSize = 0x1
        case enablePush = 0x2
        case maxConcurrentStreams = 0x3
        case initialWindowSize = 0x4
        case maxFrameSize = 0x5
        case maxHeaderListSize = 0x6
    }

    /// Error codes (RFC 9113 §7); thrown when the server breaks the protocol and the connection must end.
    package enum ErrorCode: UInt32, Error {
        case noError = 0x0
        case protocolError = 0x1
        case flowControlError = 0x3
        case frameSizeError = 0x6
        case refusedStream = 0x7
        case cancel = 0x8
        case compressionError = 0x9
        case enhanceYourCalm = 0xb
    }

    /// The largest flow-control window (RFC 9113 §6.9.1).
    package static let maximumWindow = 0x7FFF_FFFF

    /// `window` grown by a WINDOW_UPDATE's `increment` or a SETTINGS_INITIAL_WINDOW_SIZE change; past 2^31-1 it is
    /// the connection error FLOW_CONTROL_ERROR (RFC 9113 §6.9.1, §6.9.2).
    package static func grow(_ window: inout Int, by increment: Int) throws(ErrorCode) {
        guard window + increment <= Self.maximumWindow else { throw .flowControlError }
        window += increment
    }

    /// The peer's SETTINGS_INITIAL_WINDOW_SIZE became `value`: `initial` takes it, and every open stream's send window
    /// (`sendWindow` of each of `streams`) moves by the difference (RFC 9113 §6.9.2). Past 2^31-1, FLOW_CONTROL_ERROR.
    package static func changeInitialWindow<Key, Stream>(
        to value: UInt32, initial: inout Int, streams: inout [Key: Stream], sendWindow: WritableKeyPath<Stream, Int>
    ) throws(ErrorCode) {
        guard value <= Self.maximumWindow else { throw .flowControlError }
        let delta = Int(value) - initial
        initial = Int(value)
        var index = streams.values.startIndex
        while index != streams.values.endIndex {
            try Self.grow(&streams.values[index][keyPath: sendWindow], by: delta)
            streams.values.formIndex(after: &index)
        }
    }
}

extension ByteBuffer {
    /// Writes the HTTP/2 client connection preface.
    package mutating func writeHTTP2Preface() {
        self.writeStaticString(HTTP2Wire.preface)
    }

    /// Writes a frame header for a payload of `length` bytes.
    package mutating func writeHTTP2FrameHeader(length: Int, type: HTTP2Wire.FrameType, flags: HTTP2Wire.Flags = [], streamID: UInt32) {
        self.writeInteger(UInt8(truncatingIfNeeded: length >> 16))
        self.writeInteger(UInt16(truncatingIfNeeded: length))
        self.writeInteger(type.rawValue)
        self.writeInteger(flags.rawValue)
        self.writeInteger(streamID)
    }

    /// Writes a SETTINGS frame.
    package mutating func writeHTTP2Settings(_ settings: [(HTTP2Wire.Setting, UInt32)]) {
        self.writeHTTP2FrameHeader(length: 6 * settings.count, type: .settings, streamID: 0)
        for (setting, value) in settings {
            self.writeInteger(setting.rawValue)
            self.writeInteger(value)
        }
    }

    /// Writes a WINDOW_UPDATE frame.
    package mutating func writeHTTP2WindowUpdate(streamID: UInt32, increment: Int) {
        self.writeHTTP2FrameHeader(length: 4, type: .windowUpdate, streamID: streamID)
        self.writeInteger(UInt32(increment))
    }

    /// Writes a PING frame, or its acknowledgement.
    package mutating func writeHTTP2Ping(opaqueData: UInt64, ack: Bool = false) {
        self.writeHTTP2FrameHeader(length: 8, type: .ping, flags: ack ? .ack : [], streamID: 0)
        self.writeInteger(opaqueData)
    }

    /// Writes a RST_STREAM frame.
    package mutating func writeHTTP2ResetStream(streamID: UInt32, error: HTTP2Wire.ErrorCode) {
        self.writeHTTP2FrameHeader(length: 4, type: .rstStream, streamID: streamID)
        self.writeInteger(error.rawValue)
    }

    /// Writes a GOAWAY frame with no debug data.
    package mutating func writeHTTP2GoAway(lastStreamID: UInt32, error: HTTP2Wire.ErrorCode) {
        self.writeHTTP2FrameHeader(length: 8, type: .goAway, streamID: 0)
        self.writeInteger(lastStreamID)
        self.writeInteger(error.rawValue)
    }
}

// MARK: - HPACK primitives (RFC 7541 §5, §6)

extension ByteBuffer {
    /// An integer with an N-bit prefix (RFC 7541 §5.1); `flags` fills the first byte's other bits.
    package mutating func writeHPACKInteger(_ value: Int, prefix: Int, flags: UInt8) {
        let limit = (1 << prefix) - 1
        guard value >= limit else {
            self.writeInteger(flags | UInt8(value))
            return
        }
        self.writeInteger(flags | UInt8(limit))
        var rest = value - limit
        while rest >= 128 {
            self.writeInteger(UInt8(rest & 0x7F | 0x80))
            rest >>= 7
        }
        self.writeInteger(UInt8(rest))
    }

    /// A string literal without Huffman coding (RFC 7541 §5.2): on loopback or in a datacenter, Huffman costs more
    /// CPU than the bytes it saves.
    package mutating func writeHPACKString(_ string: String) {
        self.writeHPACKInteger(string.utf8.count, prefix: 7, flags: 0x00)
        self.writeString(string)
    }

    /// A header field never added to the dynamic table (RFC 7541 §6.2.2), named by a static table index or, with
    /// index 0, literally.
    package mutating func writeHPACKLiteral(name: String, staticIndex: Int = 0, value: String) {
        self.writeHPACKInteger(staticIndex, prefix: 4, flags: 0x00)
        if staticIndex == 0 { self.writeHPACKString(name) }
        self.writeHPACKString(value)
    }
}
