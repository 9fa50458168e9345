import BlimpHTTP2
import Foundation
import NIOCore
import NIOHPACK

/// Serves one APNs connection: HTTP/2 (RFC 9113) over the TLS byte stream, for APNs's one request shape. It collects
/// each stream's HEADERS and DATA, lets ``SimulatedAPNs`` answer, and writes the response frames.
///
/// Like APNs it starts with `SETTINGS_MAX_CONCURRENT_STREAMS` 1 and raises it after the first valid provider token,
/// refuses streams beyond the limit, and treats protocol violations as HTTP/2 errors. It keeps the client's
/// flow-control windows open, honours its own send windows, answers PING, and applies connection faults (GOAWAY,
/// dropped connections, latency). Frames are gathered in one buffer and flushed when a read is complete.
final class SimulatorConnectionHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    /// A stream whose request is still arriving.
    private struct PendingRequest {
        var block: RequestHeaderBlock
        var body: [UInt8] = []
    }

    /// A header block arriving in CONTINUATION frames.
    private struct PartialHeaders {
        var streamID: UInt32
        var block: ByteBuffer
        var endStream: Bool
    }

    /// A response body waiting for flow-control window.
    private struct BlockedBody {
        var streamID: UInt32
        var body: [UInt8]
    }

    private let apns: SimulatedAPNs
    private let settings: SharedConnectionSettings
    private var connection = SimulatorConnectionState()
    private var decoder = HPACKDecoder(allocator: ByteBufferAllocator(), maxDynamicTableSize: 4096, maxHeaderListSize: 8000)
    private var context: ChannelHandlerContext?
    private var inbound: ByteBuffer?
    private var outbound = ByteBuffer()
    private var prefaceReceived = false
    private var partialHeaders: PartialHeaders?
    private var pending: [UInt32: PendingRequest] = [:]
    private var blockedBodies = CircularBuffer<BlockedBody>()
    /// Streams opened by the client and not yet answered (or reset).
    private var openStreams = Set<UInt32>()
    private var streamWindows: [UInt32: Int] = [:]
    private var streamLimit = 1
    private var highestStreamID: UInt32 = 0
    private var streamsSeen = 0
    private var goingAway = false
    private var closeScheduled = false
    private var connectionSendWindow = HTTP2Wire.defaultWindowSize
    private var initialStreamSendWindow = HTTP2Wire.defaultWindowSize
    /// Body bytes received since the connection window was last replenished.
    private var unreplenishedBytes = 0

    init(apns: SimulatedAPNs, settings: SharedConnectionSettings) {
        self.apns = apns
        self.settings = settings
    }

    /// The settings APNs has been observed to send, with one stream until a valid provider token arrives
    /// (reference: apns-live-activities.md §5.2, §7.2).
    static let initialSettings: [(HTTP2Wire.Setting, UInt32)] = [
        (.maxConcurrentStreams, 1),
        (.headerTableSize, 4096),
        (.maxHeaderListSize, 8000),
        (.initialWindowSize, 65_535),
        (.maxFrameSize, 16_384),
    ]

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        self.outbound = context.channel.allocator.buffer(capacity: 16_384)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
    }

    func channelActive(context: ChannelHandlerContext) {
        self.outbound.writeHTTP2Settings(Self.initialSettings)
        self.flush(context: context)
        context.fireChannelActive()
    }

    // MARK: Reading

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var bytes = self.unwrapInboundIn(data)
        if var pending = self.inbound {
            pending.discardReadBytes()
            pending.writeBuffer(&bytes)
            bytes = pending
        }
        do {
            if !self.prefaceReceived {
                guard bytes.readableBytes >= 24 else {
                    self.inbound = bytes
                    return
                }
                guard bytes.readString(length: 24) == HTTP2Wire.preface.description else { throw HTTP2Wire.ErrorCode.protocolError }
                self.prefaceReceived = true
            }
            while let (header, payload) = HTTP2Wire.readFrame(from: &bytes) {
                guard header.length <= HTTP2Wire.defaultMaxFrameSize else { throw HTTP2Wire.ErrorCode.frameSizeError }
                try self.receive(header, payload, context: context)
                guard context.channel.isActive else { return }  // a fault dropped the connection
            }
        } catch {
            self.fail(error as? HTTP2Wire.ErrorCode ?? .protocolError, context: context)
            return
        }
        self.inbound = bytes.readableBytes > 0 ? bytes : nil
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        self.flush(context: context)
        context.fireChannelReadComplete()
    }

    private func receive(_ header: HTTP2Wire.FrameHeader, _ payload: ByteBuffer, context: ChannelHandlerContext) throws {
        var payload = payload
        if self.partialHeaders != nil, header.type != .continuation { throw HTTP2Wire.ErrorCode.protocolError }
        switch header.type {
        case .headers:
            guard header.streamID != 0 else { throw HTTP2Wire.ErrorCode.protocolError }
            var block = try Self.unpadded(payload, flags: header.flags)
            if header.flags.contains(.priority) {
                guard block.readableBytes >= 5 else { throw HTTP2Wire.ErrorCode.protocolError }
                block.moveReaderIndex(forwardBy: 5)  // PRIORITY is ignored, as APNs does
            }
            let endStream = header.flags.contains(.endStream)
            if header.flags.contains(.endHeaders) {
                try self.receiveHeaders(block, streamID: header.streamID, endStream: endStream, context: context)
            } else {
                self.partialHeaders = PartialHeaders(streamID: header.streamID, block: block, endStream: endStream)
            }
        case .continuation:
            guard var partial = self.partialHeaders, partial.streamID == header.streamID else {
                throw HTTP2Wire.ErrorCode.protocolError
            }
            partial.block.writeBuffer(&payload)
            if header.flags.contains(.endHeaders) {
                self.partialHeaders = nil
                try self.receiveHeaders(partial.block, streamID: partial.streamID, endStream: partial.endStream, context: context)
            } else {
                self.partialHeaders = partial
            }
        case .data:
            guard header.streamID != 0 else { throw HTTP2Wire.ErrorCode.protocolError }
            let data = try Self.unpadded(payload, flags: header.flags)
            self.receiveData(data, flowControlled: header.length, streamID: header.streamID, endStream: header.flags.contains(.endStream), context: context)
        case .rstStream:
            self.pending[header.streamID] = nil
            self.closeStream(header.streamID)
        case .settings:
            guard !header.flags.contains(.ack) else { return }
            try self.receiveSettings(payload)
        case .ping:
            guard header.length == 8 else { throw HTTP2Wire.ErrorCode.frameSizeError }
            guard !header.flags.contains(.ack) else { return }
            self.outbound.writeHTTP2FrameHeader(length: 8, type: .ping, flags: .ack, streamID: 0)
            self.outbound.writeBuffer(&payload)
        case .windowUpdate:
            guard let increment = payload.readInteger(as: UInt32.self) else { throw HTTP2Wire.ErrorCode.frameSizeError }
            if header.streamID == 0 {
                self.connectionSendWindow += Int(increment & 0x7FFF_FFFF)
            } else if self.streamWindows[header.streamID] != nil {
                self.streamWindows[header.streamID]! += Int(increment & 0x7FFF_FFFF)
            }
            self.writeBlockedBodies()
        case .goAway:
            self.goingAway = true
            self.closeIfGoneAway(context: context)
        case .pushPromise:
            throw HTTP2Wire.ErrorCode.protocolError  // clients never push
        case .priority, nil:
            break  // PRIORITY is ignored, as APNs does; unknown frame types are ignored (RFC 9113 §4.1)
        }
    }

    /// A complete request header block: a new stream, answered now if it carries no body.
    private func receiveHeaders(_ block: ByteBuffer, streamID: UInt32, endStream: Bool, context: ChannelHandlerContext) throws {
        var block = block
        let headers: HPACKHeaders
        do {
            headers = try self.decoder.decodeHeaders(from: &block)
        } catch {
            throw HTTP2Wire.ErrorCode.compressionError
        }
        // New streams are odd and increasing; trailers on an open stream are not part of APNs's protocol.
        guard streamID % 2 == 1, streamID > self.highestStreamID else { throw HTTP2Wire.ErrorCode.protocolError }
        self.highestStreamID = streamID
        guard !self.goingAway else { return }  // above the GOAWAY's last stream id: never processed
        guard self.openStreams.count < self.streamLimit else {
            self.outbound.writeHTTP2ResetStream(streamID: streamID, error: .refusedStream)
            return
        }
        let request: RequestHeaderBlock
        do {
            request = try RequestHeaderBlock(headers)
        } catch {
            self.outbound.writeHTTP2ResetStream(streamID: streamID, error: .protocolError)
            return
        }
        self.streamsSeen += 1
        self.openStreams.insert(streamID)
        self.streamWindows[streamID] = self.initialStreamSendWindow
        let settings = self.settings.current
        if settings.dropEvery > 0, self.streamsSeen % settings.dropEvery == 0 {
            context.close(promise: nil)
            return
        }
        if endStream {
            self.answer(streamID, PendingRequest(block: request), settings: settings, context: context)
        } else {
            self.pending[streamID] = PendingRequest(block: request)
        }
    }

    private func receiveData(_ data: ByteBuffer, flowControlled: Int, streamID: UInt32, endStream: Bool, context: ChannelHandlerContext) {
        self.replenishWindow(consumed: flowControlled, stream: streamID, ended: endStream)
        guard var request = self.pending[streamID] else { return }  // reset, refused or never opened
        // Enough to see that a body is too large (413 PayloadTooLarge), never more.
        if request.body.count <= Self.maxBufferedBody {
            request.body.append(contentsOf: data.readableBytesView)
        }
        if endStream {
            self.pending[streamID] = nil
            self.answer(streamID, request, settings: self.settings.current, context: context)
        } else {
            self.pending[streamID] = request
        }
    }

    private func receiveSettings(_ payload: ByteBuffer) throws {
        var payload = payload
        guard payload.readableBytes % 6 == 0 else { throw HTTP2Wire.ErrorCode.frameSizeError }
        while let identifier = payload.readInteger(as: UInt16.self), let value = payload.readInteger(as: UInt32.self) {
            if HTTP2Wire.Setting(rawValue: identifier) == .initialWindowSize {
                guard value <= 0x7FFF_FFFF else { throw HTTP2Wire.ErrorCode.flowControlError }
                let delta = Int(value) - self.initialStreamSendWindow
                self.initialStreamSendWindow = Int(value)
                for streamID in self.streamWindows.keys { self.streamWindows[streamID]! += delta }
            }
            // The response header encoder never indexes, so the client's HEADER_TABLE_SIZE does not matter.
        }
        self.outbound.writeHTTP2FrameHeader(length: 0, type: .settings, flags: .ack, streamID: 0)
        self.writeBlockedBodies()
    }

    /// A frame's payload without its padding (RFC 9113 §6.1).
    private static func unpadded(_ payload: ByteBuffer, flags: HTTP2Wire.Flags) throws -> ByteBuffer {
        guard flags.contains(.padded) else { return payload }
        var payload = payload
        guard let padding = payload.readInteger(as: UInt8.self), Int(padding) <= payload.readableBytes else {
            throw HTTP2Wire.ErrorCode.protocolError
        }
        return payload.readSlice(length: payload.readableBytes - Int(padding))!
    }

    // MARK: Answering

    private func answer(_ streamID: UInt32, _ request: PendingRequest, settings: ConnectionSettings, context: ChannelHandlerContext) {
        let response = self.apns.handle(
            SimulatorRequest(method: request.block.method, path: request.block.path, headers: request.block.headers, body: request.body),
            connection: &self.connection
        )
        if self.connection.hasValidProviderToken, self.streamLimit == 1, settings.maxConcurrentStreams != 1 {
            self.streamLimit = settings.maxConcurrentStreams
            self.outbound.writeHTTP2Settings([(.maxConcurrentStreams, UInt32(settings.maxConcurrentStreams))])
        }
        if !self.goingAway, settings.goAwayEvery > 0, self.streamsSeen >= settings.goAwayEvery {
            self.goAway()
        }
        if settings.latencyMilliseconds > 0 {
            let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
            context.eventLoop.scheduleTask(in: .milliseconds(Int64(settings.latencyMilliseconds))) {
                let (handler, context) = loopBound.value
                handler.write(response, on: streamID, context: context)
                handler.flush(context: context)
            }
        } else {
            self.write(response, on: streamID, context: context)
        }
    }

    /// HEADERS (`:status`, `apns-id`, and `content-type` with a body), then the JSON body in DATA.
    private func write(_ response: SimulatorResponse, on streamID: UInt32, context: ChannelHandlerContext) {
        guard self.openStreams.contains(streamID) else { return }  // reset by the client meanwhile
        let body = response.body
        let frameStart = self.outbound.writerIndex
        self.outbound.writeHTTP2FrameHeader(length: 0, type: .headers, flags: body.isEmpty ? [.endHeaders, .endStream] : .endHeaders, streamID: streamID)
        if let index = Self.statusIndex[response.status] {
            self.outbound.writeInteger(UInt8(0x80 | index))  // indexed from the static table
        } else {
            self.outbound.writeHPACKLiteral(name: ":status", staticIndex: 8, value: String(response.status))
        }
        self.outbound.writeHPACKLiteral(name: "apns-id", value: response.apnsID)
        if !body.isEmpty {
            self.outbound.writeHPACKLiteral(name: "content-type", staticIndex: 31, value: "application/json")
        }
        let length = self.outbound.writerIndex - frameStart - 9
        self.outbound.setInteger(UInt8(truncatingIfNeeded: length >> 16), at: frameStart)
        self.outbound.setInteger(UInt16(truncatingIfNeeded: length), at: frameStart + 1)
        if body.isEmpty {
            self.closeStream(streamID)
        } else if !self.blockedBodies.isEmpty || !self.writeBody(body, on: streamID) {
            self.blockedBodies.append(BlockedBody(streamID: streamID, body: body))
        }
        self.closeIfGoneAway(context: context)
    }

    /// More than any push type's largest payload (5120 bytes for VoIP).
    private static let maxBufferedBody = 8192

    /// `:status` values in HPACK's static table (RFC 7541 Appendix A).
    private static let statusIndex: [Int: UInt8] = [200: 8, 204: 9, 206: 10, 304: 11, 400: 12, 404: 13, 500: 14]

    /// Writes a response body ending its stream, if both send windows have room for all of it.
    private func writeBody(_ body: [UInt8], on streamID: UInt32) -> Bool {
        guard let window = self.streamWindows[streamID] else { return true }  // reset meanwhile
        guard body.count <= self.connectionSendWindow, body.count <= window else { return false }
        self.connectionSendWindow -= body.count
        self.outbound.writeHTTP2FrameHeader(length: body.count, type: .data, flags: .endStream, streamID: streamID)
        self.outbound.writeBytes(body)
        self.closeStream(streamID)
        return true
    }

    private func writeBlockedBodies() {
        while let blocked = self.blockedBodies.first, self.writeBody(blocked.body, on: blocked.streamID) {
            self.blockedBodies.removeFirst()
        }
        if let context = self.context { self.closeIfGoneAway(context: context) }
    }

    private func closeStream(_ streamID: UInt32) {
        self.openStreams.remove(streamID)
        self.streamWindows[streamID] = nil
    }

    private func flush(context: ChannelHandlerContext) {
        guard self.outbound.readableBytes > 0 else { return }
        let bytes = self.outbound
        self.outbound = context.channel.allocator.buffer(capacity: 16_384)
        context.writeAndFlush(self.wrapOutboundOut(bytes), promise: nil)
    }

    // MARK: Connection faults and errors

    /// GOAWAY with APNs's JSON reason. Streams up to the highest one received are still answered, then the
    /// connection closes; streams above it were never processed and the client must send them again on a new
    /// connection (reference: apns-live-activities.md §5.5).
    private func goAway() {
        self.goingAway = true
        let reason = #"{"reason":"Shutdown"}"#
        self.outbound.writeHTTP2FrameHeader(length: 8 + reason.utf8.count, type: .goAway, streamID: 0)
        self.outbound.writeInteger(self.highestStreamID)
        self.outbound.writeInteger(HTTP2Wire.ErrorCode.noError.rawValue)
        self.outbound.writeString(reason)
    }

    /// Once every stream up to the GOAWAY's last stream id is answered, the connection closes: a second later, or
    /// sooner when the client closes it. (Closing at once could reset the connection while the client's later
    /// requests are still unread, and a TCP reset can destroy the GOAWAY and the last answers on their way.)
    private func closeIfGoneAway(context: ChannelHandlerContext) {
        guard self.goingAway, self.openStreams.isEmpty, !self.closeScheduled else { return }
        self.closeScheduled = true
        self.flush(context: context)
        let channel = context.channel
        context.eventLoop.scheduleTask(in: Self.closeGrace) { channel.close(promise: nil) }
    }

    private static let closeGrace = TimeAmount.seconds(1)

    /// Ends the connection after a protocol error by the client.
    private func fail(_ error: HTTP2Wire.ErrorCode, context: ChannelHandlerContext) {
        self.outbound.writeHTTP2GoAway(lastStreamID: self.highestStreamID, error: error)
        self.flush(context: context)
        context.close(promise: nil)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }

    /// Gives received body bytes back to the client: the connection window in batches, and the stream window while
    /// the stream is still sending.
    private func replenishWindow(consumed: Int, stream: UInt32, ended: Bool) {
        guard consumed > 0 else { return }
        if !ended, self.pending[stream] != nil {
            self.outbound.writeHTTP2WindowUpdate(streamID: stream, increment: consumed)
        }
        self.unreplenishedBytes += consumed
        if self.unreplenishedBytes >= 16_384 {
            self.outbound.writeHTTP2WindowUpdate(streamID: 0, increment: self.unreplenishedBytes)
            self.unreplenishedBytes = 0
        }
    }
}
