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
    private var reader = HTTP2FrameReader(expectingPreface: true)
    private var outbound = ByteBuffer()
    private var pending: [UInt32: PendingRequest] = [:]
    private var blockedBodies = CircularBuffer<BlockedBody>()
    /// Streams opened by the client and not yet answered (or reset), with their send windows.
    private var openStreams: [UInt32: Int] = [:]
    private var streamLimit = 1
    private var highestStreamID: UInt32 = 0
    private var streamsSeen = 0
    private var goingAway = false
    private var closeScheduled = false
    private var connectionSendWindow = HTTP2Wire.defaultWindowSize
    private var initialStreamSendWindow = HTTP2Wire.defaultWindowSize
    private var receiveWindow = ConnectionReceiveWindow()

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
        self.reader.append(self.unwrapInboundIn(data))
        do throws(HTTP2Wire.ErrorCode) {
            while let frame = try self.reader.next() {
                try self.receive(frame, context: context)
                guard context.channel.isActive else { return }  // a fault dropped the connection
            }
        } catch {
            self.fail(error, context: context)
        }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        self.flush(context: context)
        context.fireChannelReadComplete()
    }

    private func receive(_ frame: HTTP2FrameReader.Frame, context: ChannelHandlerContext) throws(HTTP2Wire.ErrorCode) {
        switch frame {
        case .headers(let streamID, let block, let endStream):
            try self.receiveHeaders(block, streamID: streamID, endStream: endStream, context: context)
        case .data(let streamID, let data, let flowControlledLength, let endStream):
            self.receiveData(data, flowControlled: flowControlledLength, streamID: streamID, endStream: endStream, context: context)
        case .rstStream(let streamID, _):
            self.pending[streamID] = nil
            self.closeStream(streamID)
            self.closeIfGoneAway(context: context)
        case .settings(let settings):
            try self.receiveSettings(settings)
        case .settingsAck:
            break
        case .ping(let opaqueData, let ack):
            if !ack { self.outbound.writeHTTP2Ping(opaqueData: opaqueData, ack: true) }
        case .windowUpdate(let streamID, let increment):
            if streamID == 0 {
                try HTTP2Wire.grow(&self.connectionSendWindow, by: increment)
            } else if self.openStreams[streamID] != nil {
                try HTTP2Wire.grow(&self.openStreams[streamID]!, by: increment)
            }
            self.writeBlockedBodies()
        case .goAway:
            self.goingAway = true
            self.closeIfGoneAway(context: context)
        case .pushPromise:
            throw .protocolError  // clients never push
        }
    }

    /// A complete request header block: a new stream, answered now if it carries no body.
    private func receiveHeaders(_ block: ByteBuffer, streamID: UInt32, endStream: Bool, context: ChannelHandlerContext) throws(HTTP2Wire.ErrorCode) {
        var block = block
        let headers: HPACKHeaders
        do {
            headers = try self.decoder.decodeHeaders(from: &block)
        } catch {
            throw .compressionError
        }
        // New streams are odd and increasing; trailers on an open stream are not part of APNs's protocol.
        guard streamID % 2 == 1, streamID > self.highestStreamID else { throw .protocolError }
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
        self.openStreams[streamID] = self.initialStreamSendWindow
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

    private func receiveSettings(_ settings: [(identifier: UInt16, value: UInt32)]) throws(HTTP2Wire.ErrorCode) {
        // The response header encoder never indexes, so the client's HEADER_TABLE_SIZE does not matter.
        for (identifier, value) in settings where HTTP2Wire.Setting(rawValue: identifier) == .initialWindowSize {
            guard value <= 0x7FFF_FFFF else { throw .flowControlError }
            let delta = Int(value) - self.initialStreamSendWindow
            self.initialStreamSendWindow = Int(value)
            for streamID in self.openStreams.keys { try HTTP2Wire.grow(&self.openStreams[streamID]!, by: delta) }
        }
        self.outbound.writeHTTP2FrameHeader(length: 0, type: .settings, flags: .ack, streamID: 0)
        self.writeBlockedBodies()
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
        guard self.openStreams[streamID] != nil else { return }  // reset by the client meanwhile
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
        guard let window = self.openStreams[streamID] else { return true }  // reset meanwhile
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
        self.openStreams[streamID] = nil
    }

    private func flush(context: ChannelHandlerContext) {
        context.writeAndFlushFrames(self.outbound.takeFrames(allocator: context.channel.allocator))
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
        self.receiveWindow.consume(consumed, writingUpdateTo: &self.outbound)
    }
}
