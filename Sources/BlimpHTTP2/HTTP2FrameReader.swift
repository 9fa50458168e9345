import NIOCore

/// Turns the bytes of an HTTP/2 connection into whole frames (RFC 9113 §4, §6): it keeps partial frames between reads,
/// checks the frame size, strips padding and priority fields, and joins a header block split over CONTINUATION
/// frames, up to ``maximumHeaderBlock`` bytes (a peer that sends more, or CONTINUATION without end, is cut off with
/// ENHANCE_YOUR_CALM instead of growing the buffer). A WINDOW_UPDATE of 0 is a PROTOCOL_ERROR. PRIORITY and unknown
/// frame types are skipped.
package struct HTTP2FrameReader {
    /// The largest header block, HEADERS and CONTINUATION frames together. APNs's requests and answers need a few
    /// hundred bytes; 64 KiB is as much as NIO's HTTP/2 accepts by default.
    package static let maximumHeaderBlock = 64 * 1024

    /// A frame as the connection handlers act on it.
    package enum Frame: Sendable {
        /// DATA: the payload without padding, and the length that counts against flow control.
        case data(streamID: UInt32, data: ByteBuffer, flowControlledLength: Int, endStream: Bool)
        /// A complete header block, from HEADERS and any CONTINUATION frames.
        case headers(streamID: UInt32, block: ByteBuffer, endStream: Bool)
        case rstStream(streamID: UInt32, errorCode: UInt32)
        /// SETTINGS from the peer (not an acknowledgement), as identifier and value pairs.
        case settings([(identifier: UInt16, value: UInt32)])
        case settingsAck
        case ping(opaqueData: UInt64, ack: Bool)
        case goAway(lastStreamID: UInt32, errorCode: UInt32)
        case windowUpdate(streamID: UInt32, increment: Int)
        case pushPromise
    }

    private var buffer: ByteBuffer?
    private var awaitingPreface: Bool
    private var partialHeaders: (streamID: UInt32, block: ByteBuffer, endStream: Bool)?

    /// - Parameter expectingPreface: `true` on the server side, which first reads the client's connection preface.
    package init(expectingPreface: Bool) {
        self.awaitingPreface = expectingPreface
    }

    /// Adds bytes read from the connection.
    package mutating func append(_ bytes: ByteBuffer) {
        if var buffered = self.buffer {
            var bytes = bytes
            buffered.discardReadBytes()
            buffered.writeBuffer(&bytes)
            self.buffer = buffered
        } else {
            self.buffer = bytes
        }
    }

    /// The next whole frame, or `nil` until more bytes arrive.
    ///
    /// - Throws: the HTTP/2 error that ends the connection, when the peer breaks the protocol.
    package mutating func next() throws(HTTP2Wire.ErrorCode) -> Frame? {
        guard var bytes = self.buffer else { return nil }
        defer { self.buffer = bytes.readableBytes > 0 ? bytes : nil }
        if self.awaitingPreface {
            let preface = HTTP2Wire.preface.description
            guard bytes.readableBytes >= preface.utf8.count else { return nil }
            guard bytes.readString(length: preface.utf8.count) == preface else { throw .protocolError }
            self.awaitingPreface = false
        }
        while let (header, payload) = Self.readFrame(from: &bytes) {
            guard header.length <= HTTP2Wire.defaultMaxFrameSize else { throw .frameSizeError }
            if let frame = try self.frame(header, payload) { return frame }
        }
        return nil
    }

    private mutating func frame(_ header: FrameHeader, _ payload: ByteBuffer) throws(HTTP2Wire.ErrorCode) -> Frame? {
        var payload = payload
        if self.partialHeaders != nil, header.type != .continuation { throw .protocolError }
        switch header.type {
        case .data:
            guard header.streamID != 0 else { throw .protocolError }
            let data = try Self.unpadded(payload, flags: header.flags)
            return .data(streamID: header.streamID, data: data, flowControlledLength: header.length, endStream: header.flags.contains(.endStream))
        case .headers:
            guard header.streamID != 0 else { throw .protocolError }
            var block = try Self.unpadded(payload, flags: header.flags)
            if header.flags.contains(.priority) {
                guard block.readableBytes >= 5 else { throw .protocolError }
                block.moveReaderIndex(forwardBy: 5)
            }
            let endStream = header.flags.contains(.endStream)
            guard block.readableBytes <= Self.maximumHeaderBlock else { throw .enhanceYourCalm }
            guard header.flags.contains(.endHeaders) else {
                self.partialHeaders = (header.streamID, block, endStream)
                return nil
            }
            return .headers(streamID: header.streamID, block: block, endStream: endStream)
        case .continuation:
            guard var partial = self.partialHeaders, partial.streamID == header.streamID else { throw .protocolError }
            guard partial.block.readableBytes + payload.readableBytes <= Self.maximumHeaderBlock else { throw .enhanceYourCalm }
            partial.block.writeBuffer(&payload)
            guard header.flags.contains(.endHeaders) else {
                self.partialHeaders = partial
                return nil
            }
            self.partialHeaders = nil
            return .headers(streamID: partial.streamID, block: partial.block, endStream: partial.endStream)
        case .rstStream:
            guard let code = payload.readInteger(as: UInt32.self) else { throw .frameSizeError }
            return .rstStream(streamID: header.streamID, errorCode: code)
        case .settings:
            if header.flags.contains(.ack) { return .settingsAck }
            guard payload.readableBytes % 6 == 0 else { throw .frameSizeError }
            var settings: [(identifier: UInt16, value: UInt32)] = []
            while let identifier = payload.readInteger(as: UInt16.self), let value = payload.readInteger(as: UInt32.self) {
                settings.append((identifier, value))
            }
            return .settings(settings)
        case .ping:
            guard let data = payload.readInteger(as: UInt64.self), header.length == 8 else { throw .frameSizeError }
            return .ping(opaqueData: data, ack: header.flags.contains(.ack))
        case .goAway:
            guard let lastStreamID = payload.readInteger(as: UInt32.self), let errorCode = payload.readInteger(as: UInt32.self) else {
                throw .frameSizeError
            }
            return .goAway(lastStreamID: lastStreamID & 0x7FFF_FFFF, errorCode: errorCode)
        case .windowUpdate:
            guard let increment = payload.readInteger(as: UInt32.self), header.length == 4 else { throw .frameSizeError }
            // RFC 9113 §6.9: an increment of 0 is an error; both ends of ours close the connection for it.
            guard increment & 0x7FFF_FFFF > 0 else { throw .protocolError }
            return .windowUpdate(streamID: header.streamID, increment: Int(increment & 0x7FFF_FFFF))
        case .pushPromise:
            return .pushPromise
        case .priority, nil:
            return nil  // PRIORITY carries nothing either side acts on; unknown types are ignored (RFC 9113 §4.1)
        }
    }

    /// A frame's 9-byte header.
    private struct FrameHeader {
        var length: Int
        /// `nil` for a frame type HTTP/2 does not define.
        var type: HTTP2Wire.FrameType?
        var flags: HTTP2Wire.Flags
        var streamID: UInt32
    }

    /// Reads one whole frame: its header and its payload, or `nil` (nothing consumed) until all of it has arrived.
    private static func readFrame(from buffer: inout ByteBuffer) -> (FrameHeader, ByteBuffer)? {
        guard buffer.readableBytes >= 9,
            let high = buffer.getInteger(at: buffer.readerIndex, as: UInt8.self),
            let low = buffer.getInteger(at: buffer.readerIndex + 1, as: UInt16.self)
        else { return nil }
        let length = Int(high) << 16 | Int(low)
        guard buffer.readableBytes >= 9 + length else { return nil }
        buffer.moveReaderIndex(forwardBy: 3)
        let type = buffer.readInteger(as: UInt8.self)!
        let flags = HTTP2Wire.Flags(rawValue: buffer.readInteger(as: UInt8.self)!)
        let streamID = buffer.readInteger(as: UInt32.self)! & 0x7FFF_FFFF
        let payload = buffer.readSlice(length: length)!
        return (FrameHeader(length: length, type: HTTP2Wire.FrameType(rawValue: type), flags: flags, streamID: streamID), payload)
    }

    /// A frame's payload without its padding (RFC 9113 §6.1).
    private static func unpadded(_ payload: ByteBuffer, flags: HTTP2Wire.Flags) throws(HTTP2Wire.ErrorCode) -> ByteBuffer {
        guard flags.contains(.padded) else { return payload }
        var payload = payload
        guard let padding = payload.readInteger(as: UInt8.self), Int(padding) <= payload.readableBytes else {
            throw .protocolError
        }
        return payload.readSlice(length: payload.readableBytes - Int(padding))!
    }
}
