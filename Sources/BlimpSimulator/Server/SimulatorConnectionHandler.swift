import BlimpHTTP2
import Foundation
import NIOCore
import NIOHPACK

/// Serves one APNs connection: HTTP/2 (RFC 9113) over the TLS byte stream, for APNs's one request shape.
///
/// It reads frames, tells ``SimulatorHTTP2State`` what they say, and performs the actions the state returns: it
/// lets ``SimulatedAPNs`` answer complete requests, writes the response frames (after the configured latency),
/// resets, SETTINGS and GOAWAY, and closes the connection. Itself it sends APNs's initial SETTINGS, answers PING and
/// SETTINGS, keeps the client's connection window open and treats protocol violations as HTTP/2 errors. Frames are
/// gathered in one buffer and flushed when a read is complete.
final class SimulatorConnectionHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private let apns: SimulatedAPNs
    private let settings: SharedConnectionSettings
    private var connection = SimulatorConnectionState()
    private var state = SimulatorHTTP2State()
    private var decoder = HPACKDecoder(allocator: ByteBufferAllocator(), maxDynamicTableSize: 4096, maxHeaderListSize: 8000)
    private var context: ChannelHandlerContext?
    private var reader = HTTP2FrameReader(expectingPreface: true)
    private var outbound = ByteBuffer()
    private var receiveWindow = ConnectionReceiveWindow()
    /// Going away, every stream answered: nothing more is written.
    private var outputClosed = false

    init(apns: SimulatedAPNs, settings: SharedConnectionSettings) {
        self.apns = apns
        self.settings = settings
    }

    /// The settings APNs has been observed to send, with one stream until a valid provider token arrives
    /// (docs/references.md#apns-connections).
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
                self.performActions(context: context)
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
            var block = block
            let headers: HPACKHeaders
            do {
                headers = try self.decoder.decodeHeaders(from: &block)
            } catch {
                throw .compressionError
            }
            let request = try? RequestHeaderBlock(headers)
            let action = try self.state.headersReceived(streamID: streamID, request: request, endStream: endStream, settings: self.settings.current)
            if let action { self.perform(action, context: context) }
        case .data(let streamID, let data, let flowControlledLength, let endStream):
            // The connection's window is given back in batches; a stream's, by the state, while it still sends.
            self.receiveWindow.consume(flowControlledLength, writingUpdateTo: &self.outbound)
            let action = self.state.dataReceived(
                streamID: streamID, bytes: data.readableBytesView, flowControlledLength: flowControlledLength, endStream: endStream
            )
            if let action { self.perform(action, context: context) }
        case .rstStream(let streamID, _):
            self.state.resetReceived(streamID: streamID)
        case .settings(let settings):
            try self.state.settingsReceived(settings)
            self.outbound.writeHTTP2FrameHeader(length: 0, type: .settings, flags: .ack, streamID: 0)
        case .settingsAck:
            break
        case .ping(let opaqueData, let ack):
            if !ack { self.outbound.writeHTTP2Ping(opaqueData: opaqueData, ack: true) }
        case .windowUpdate(let streamID, let increment):
            try self.state.windowUpdateReceived(streamID: streamID, increment: increment)
        case .goAway:
            self.state.goAwayReceived()
        case .pushPromise:
            throw .protocolError  // clients never push
        }
    }

    // MARK: Actions

    /// Does what the state asks for until it asks for nothing more.
    private func performActions(context: ChannelHandlerContext) {
        while let action = self.state.nextAction() {
            self.perform(action, context: context)
        }
    }

    private func perform(_ action: SimulatorHTTP2State.Action, context: ChannelHandlerContext) {
        switch action {
        case .refuse(let streamID):
            self.outbound.writeHTTP2ResetStream(streamID: streamID, error: .refusedStream)
        case .resetMalformed(let streamID):
            self.outbound.writeHTTP2ResetStream(streamID: streamID, error: .protocolError)
        case .drop:
            context.close(promise: nil)
        case .answer(let streamID, let request):
            self.answer(request, on: streamID, context: context)
        case .updateStreamWindow(let streamID, let increment):
            self.outbound.writeHTTP2WindowUpdate(streamID: streamID, increment: increment)
        case .announceStreamLimit(let limit):
            self.outbound.writeHTTP2Settings([(.maxConcurrentStreams, UInt32(limit))])
        case .goAway(let lastStreamID):
            let reason = #"{"reason":"Shutdown"}"#
            self.outbound.writeHTTP2FrameHeader(length: 8 + reason.utf8.count, type: .goAway, streamID: 0)
            self.outbound.writeInteger(lastStreamID)
            self.outbound.writeInteger(HTTP2Wire.ErrorCode.noError.rawValue)
            self.outbound.writeString(reason)
        case .sendBody(let streamID, let body, let endStream):
            // In frames of at most the size every client accepts.
            var offset = body.startIndex
            repeat {
                let end = min(offset + HTTP2Wire.defaultMaxFrameSize, body.endIndex)
                let flags: HTTP2Wire.Flags = endStream && end == body.endIndex ? .endStream : []
                self.outbound.writeHTTP2FrameHeader(length: end - offset, type: .data, flags: flags, streamID: streamID)
                self.outbound.writeBytes(body[offset..<end])
                offset = end
            } while offset < body.endIndex
        case .closeOutput:
            self.flush(context: context)
            self.outputClosed = true
            context.close(mode: .output, promise: nil)
            let channel = context.channel
            context.eventLoop.scheduleTask(in: Self.lingerTimeout) { channel.close(promise: nil) }
        }
    }

    /// How long a connection whose output is closed still reads, waiting for the client to close it.
    private static let lingerTimeout = TimeAmount.seconds(10)

    // MARK: Answering

    private func answer(_ request: SimulatorRequest, on streamID: UInt32, context: ChannelHandlerContext) {
        let settings = self.settings.current
        let response = self.apns.handle(request, connection: &self.connection)
        self.state.answered(hasValidProviderToken: self.connection.hasValidProviderToken, settings: settings)
        self.performActions(context: context)
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

    /// HEADERS (`:status`, `apns-id` or `apns-request-id`, `apns-unique-id` and `apns-channel-id` when set, and
    /// `content-type` with a body), then the JSON body in DATA as the windows allow.
    private func write(_ response: SimulatorResponse, on streamID: UInt32, context: ChannelHandlerContext) {
        let body = response.body
        guard self.state.respond(to: streamID, body: body) else { return }  // reset by the client meanwhile
        let frameStart = self.outbound.writerIndex
        self.outbound.writeHTTP2FrameHeader(length: 0, type: .headers, flags: body.isEmpty ? [.endHeaders, .endStream] : .endHeaders, streamID: streamID)
        if let index = Self.statusIndex[response.status] {
            self.outbound.writeInteger(UInt8(0x80 | index))  // indexed from the static table
        } else {
            self.outbound.writeHPACKLiteral(name: ":status", staticIndex: 8, value: String(response.status))
        }
        self.outbound.writeHPACKLiteral(name: response.idHeader.rawValue, value: response.apnsID)
        if let uniqueID = response.uniqueID { self.outbound.writeHPACKLiteral(name: "apns-unique-id", value: uniqueID) }
        if let channelID = response.channelID { self.outbound.writeHPACKLiteral(name: "apns-channel-id", value: channelID) }
        if !body.isEmpty {
            self.outbound.writeHPACKLiteral(name: "content-type", staticIndex: 31, value: "application/json")
        }
        let length = self.outbound.writerIndex - frameStart - 9
        self.outbound.setInteger(UInt8(truncatingIfNeeded: length >> 16), at: frameStart)
        self.outbound.setInteger(UInt16(truncatingIfNeeded: length), at: frameStart + 1)
        self.performActions(context: context)
    }

    /// `:status` values in HPACK's static table (RFC 7541 Appendix A).
    private static let statusIndex: [Int: UInt8] = [200: 8, 204: 9, 206: 10, 304: 11, 400: 12, 404: 13, 500: 14]

    private func flush(context: ChannelHandlerContext) {
        guard !self.outputClosed else {
            self.outbound.clear()  // a PING or SETTINGS acknowledgement after the end
            return
        }
        context.writeAndFlushFrames(self.outbound.takeFrames(allocator: context.channel.allocator))
    }

    // MARK: Errors

    /// Ends the connection after a protocol error by the client.
    private func fail(_ error: HTTP2Wire.ErrorCode, context: ChannelHandlerContext) {
        self.outbound.writeHTTP2GoAway(lastStreamID: self.state.highestStreamID, error: error)
        self.flush(context: context)
        context.close(promise: nil)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }
}
