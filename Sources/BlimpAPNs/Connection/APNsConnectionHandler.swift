import BlimpCore
import BlimpHTTP2
import NIOCore
import NIOHPACK
import NIOTLS

/// The I/O of one APNs connection: HTTP/2 (RFC 9113) over the TLS byte stream, written for APNs's one request shape,
/// with one stream per request and nothing allocated per frame.
///
/// It reads frames, tells ``APNsConnectionState`` what they say, and performs the actions the state returns: it
/// writes HEADERS (encoded by ``RequestHeaderEncoder``) and DATA, cancels overdue streams, hands outcomes back and
/// closes the connection. Itself it answers PING and SETTINGS, keeps the inbound connection window open, sends PING
/// when idle and fails the connection on a protocol error. Every method runs on the channel's event loop.
///
/// Frames are gathered in one buffer and flushed once per event-loop turn, or every `flushBatch` requests: one TLS
/// record and one system call for many requests. One timer per connection checks the deadlines.
final class APNsConnectionHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    let load: ConnectionLoad
    private let authority: String
    private let requestTimeout: TimeAmount
    private var state: APNsConnectionState<BatchReply.Slot>
    private var context: ChannelHandlerContext?
    private var ids = APNsIDGenerator()
    private var encoder = RequestHeaderEncoder()
    private var decoder: HPACKDecoder
    private var reader = HTTP2FrameReader(expectingPreface: false)
    private var outbound: ByteBuffer
    private var receiveWindow = ConnectionReceiveWindow()
    private var flushScheduled = false
    private var unflushedRequests = 0
    private var deadlineTimer: RepeatedTask?

    /// Requests written before a flush even within one event-loop turn, so that the server starts on them while the
    /// rest are still being written.
    private static let flushBatch = 16

    init(authority: String, requestTimeout: TimeAmount, maxStreams: Int, load: ConnectionLoad) {
        self.authority = authority
        self.requestTimeout = requestTimeout
        self.state = APNsConnectionState(maxStreams: maxStreams, requestTimeout: requestTimeout)
        self.load = load
        self.decoder = HPACKDecoder(allocator: ByteBufferAllocator())
        self.outbound = ByteBufferAllocator().buffer(capacity: 0)
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        self.outbound = context.channel.allocator.buffer(capacity: 16_384)
        // Deadlines are checked ten times per timeout: a request times out at most 10% late.
        let period = TimeAmount.nanoseconds(max(self.requestTimeout.nanoseconds / 10, 10_000_000))
        let loopBound = NIOLoopBound(self, eventLoop: context.eventLoop)
        self.deadlineTimer = context.eventLoop.scheduleRepeatedTask(initialDelay: period, delay: period) { _ in
            loopBound.value.timeOutOverdueRequests()
        }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.deadlineTimer?.cancel()
        self.context = nil
    }

    func channelActive(context: ChannelHandlerContext) {
        // The preface and our SETTINGS: no server push. TLS holds them until its handshake is done.
        self.outbound.writeHTTP2Preface()
        self.outbound.writeHTTP2Settings([(.enablePush, 0)])
        self.flush(context: context)
        context.fireChannelActive()
    }

    // MARK: Requests

    /// Takes a batch of requests, already counted in ``ConnectionLoad/inFlight``: each is written on a new stream now,
    /// or once a stream is free. `continuation` resumes with their outcomes, in order, once all have one.
    func send(_ requests: [APNsRequest], authorization: String, continuation: UnsafeContinuation<[StreamOutcome], Never>) {
        let reply = BatchReply(count: requests.count, continuation: continuation)
        let now = NIODeadline.now()
        for (index, request) in requests.enumerated() {
            self.state.enqueue(request, authorization: authorization, reply: BatchReply.Slot(batch: reply, index: index), now: now)
        }
        self.performActions(now: now)
    }

    /// Cancels the streams whose answer is overdue, and gives up on requests that waited too long for a stream.
    private func timeOutOverdueRequests() {
        guard let context = self.context else { return }
        let now = NIODeadline.now()
        self.state.timeOut(now: now)
        self.performActions(now: now)
        self.flush(context: context)
    }

    // MARK: Actions

    /// Does what the state asks for until it asks for nothing more.
    private func performActions(now: NIODeadline) {
        while let action = self.state.nextAction(now: now) {
            switch action {
            case .stopTakingRequests:
                self.load.isClosing.store(true, ordering: .relaxed)
            case .complete(let slot, let outcome, let answeredIn):
                if let answeredIn { APNsMetrics.requestDuration.recordNanoseconds(answeredIn.nanoseconds) }
                self.load.inFlight.subtract(1, ordering: .relaxed)
                slot.resolve(with: outcome)
            case .open(let streamID, let request, let authorization, let bodyBytes):
                self.writeHeaders(of: request, authorization: authorization, streamID: streamID)
                self.writeData(request.payload[..<bodyBytes], endStream: bodyBytes == request.payload.count, streamID: streamID)
                self.requestWritten()
            case .sendData(let streamID, let bytes, let endStream):
                self.writeData(bytes, endStream: endStream, streamID: streamID)
            case .cancel(let streamID):
                self.outbound.writeHTTP2ResetStream(streamID: streamID, error: .cancel)
            case .close:
                guard let context = self.context, context.channel.isActive else { break }
                self.flush(context: context)
                context.close(promise: nil)
            }
        }
    }

    /// A request's HEADERS frame, ending the stream when the request has no body.
    private func writeHeaders(of request: APNsRequest, authorization: String, streamID: UInt32) {
        // The frame's length is known once the block is encoded: write the header, then fix its length.
        let frameStart = self.outbound.writerIndex
        let flags: HTTP2Wire.Flags = request.payload.isEmpty ? [.endHeaders, .endStream] : .endHeaders
        self.outbound.writeHTTP2FrameHeader(length: 0, type: .headers, flags: flags, streamID: streamID)
        self.encoder.encode(
            request,
            authority: self.authority,
            authorization: authorization,
            apnsID: (request.apnsID ?? self.ids.next()).lowercaseString,
            into: &self.outbound
        )
        let length = self.outbound.writerIndex - frameStart - 9
        self.outbound.setInteger(UInt8(truncatingIfNeeded: length >> 16), at: frameStart)
        self.outbound.setInteger(UInt16(truncatingIfNeeded: length), at: frameStart + 1)
    }

    /// `bytes` in DATA frames of at most the default frame size, the last one ending the stream when `endStream`.
    private func writeData(_ bytes: ArraySlice<UInt8>, endStream: Bool, streamID: UInt32) {
        var offset = bytes.startIndex
        while offset < bytes.endIndex {
            let end = min(offset + HTTP2Wire.defaultMaxFrameSize, bytes.endIndex)
            let flags: HTTP2Wire.Flags = endStream && end == bytes.endIndex ? .endStream : []
            self.outbound.writeHTTP2FrameHeader(length: end - offset, type: .data, flags: flags, streamID: streamID)
            self.outbound.writeBytes(bytes[offset..<end])
            offset = end
        }
    }

    // MARK: Writing

    /// Flushes every `flushBatch` requests, and once the requests already queued on the event loop are written.
    private func requestWritten() {
        guard let context = self.context else { return }
        self.unflushedRequests += 1
        if self.unflushedRequests >= Self.flushBatch {
            self.flush(context: context)
        } else {
            self.scheduleFlush(context: context)
        }
    }

    private func scheduleFlush(context: ChannelHandlerContext) {
        guard !self.flushScheduled else { return }
        self.flushScheduled = true
        let loopBound = NIOLoopBound(self, eventLoop: context.eventLoop)
        context.eventLoop.execute {
            let handler = loopBound.value
            handler.flushScheduled = false
            if let context = handler.context { handler.flush(context: context) }
        }
    }

    private func flush(context: ChannelHandlerContext) {
        self.unflushedRequests = 0
        context.writeAndFlushFrames(self.outbound.takeFrames(allocator: context.channel.allocator))
    }

    // MARK: Reading

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        self.reader.append(self.unwrapInboundIn(data))
        let now = NIODeadline.now()
        do throws(HTTP2Wire.ErrorCode) {
            while let frame = try self.reader.next() {
                try self.receive(frame)
                self.performActions(now: now)
            }
        } catch {
            self.fail(error, context: context)
        }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        self.flush(context: context)
        context.fireChannelReadComplete()
    }

    private func receive(_ frame: HTTP2FrameReader.Frame) throws(HTTP2Wire.ErrorCode) {
        switch frame {
        case .data(let streamID, let data, let flowControlledLength, let endStream):
            // Streams end after one small body, so only the connection's window needs giving back.
            self.receiveWindow.consume(flowControlledLength, writingUpdateTo: &self.outbound)
            self.state.dataReceived(streamID: streamID, data: data, endStream: endStream)
        case .headers(let streamID, let block, let endStream):
            // Always decoded: HPACK's table depends on every block.
            var block = block
            let headers: HPACKHeaders
            do {
                headers = try self.decoder.decodeHeaders(from: &block)
            } catch {
                throw .compressionError
            }
            let status = headers.first(name: ":status").flatMap(Int.init)
            self.state.headersReceived(
                streamID: streamID, status: status, apnsID: headers.first(name: "apns-id"),
                uniqueID: headers.first(name: "apns-unique-id"), endStream: endStream)
        case .rstStream(let streamID, let errorCode):
            self.state.resetReceived(streamID: streamID, errorCode: errorCode)
        case .settings(let settings):
            try self.state.settingsReceived(settings)
            // Our frames are far below any MAX_FRAME_SIZE; the other settings do not concern a client.
            for (identifier, value) in settings where identifier == HTTP2Wire.Setting.headerTableSize.rawValue {
                self.encoder.setPeerTableSize(Int(value))
            }
            self.load.streamLimit.store(self.state.streamLimit, ordering: .relaxed)
            self.outbound.writeHTTP2FrameHeader(length: 0, type: .settings, flags: .ack, streamID: 0)
        case .settingsAck:
            break
        case .ping(let opaqueData, let ack):
            if !ack { self.outbound.writeHTTP2Ping(opaqueData: opaqueData, ack: true) }
        case .goAway(let lastStreamID, _):
            self.state.goAwayReceived(lastStreamID: lastStreamID)
        case .windowUpdate(let streamID, let increment):
            try self.state.windowUpdateReceived(streamID: streamID, increment: increment)
        case .pushPromise:
            throw .protocolError  // we said SETTINGS_ENABLE_PUSH = 0
        }
    }

    // MARK: Connection events

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if event is IdleStateHandler.IdleStateEvent {
            self.outbound.writeHTTP2Ping(opaqueData: 0)
            self.flush(context: context)
        } else if case .handshakeCompleted(let negotiatedProtocol)? = event as? TLSUserEvent, negotiatedProtocol != "h2" {
            context.close(promise: nil)  // APNs speaks HTTP/2 only
        } else {
            context.fireUserInboundEventTriggered(event)
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        self.state.connectionClosed()
        self.performActions(now: .now())
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }

    /// Ends the connection after a protocol error by the server.
    private func fail(_ error: HTTP2Wire.ErrorCode, context: ChannelHandlerContext) {
        self.outbound.writeHTTP2GoAway(lastStreamID: 0, error: error)
        self.flush(context: context)
        context.close(promise: nil)
    }
}
