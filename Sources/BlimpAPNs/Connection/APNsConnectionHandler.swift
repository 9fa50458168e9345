import BlimpCore
import BlimpHTTP2
import NIOCore
import NIOHPACK
import NIOTLS

/// The client side of one APNs connection: HTTP/2 (RFC 9113) over the TLS byte stream, written for APNs's one
/// request shape, with one stream per request and nothing allocated per frame.
///
/// It opens at most the server's `SETTINGS_MAX_CONCURRENT_STREAMS` (capped by
/// ``APNsClientConfiguration/maxStreamsPerConnection``) at once; requests beyond that wait here in order. It honours
/// the server's flow-control windows, handles GOAWAY (streams above the last stream id, and waiting requests, are
/// reported unprocessed), fails every open stream when the connection goes, times requests out, keeps the inbound
/// connection window open, answers PING and SETTINGS, and sends PING when idle. Every method runs on the channel's
/// event loop.
///
/// Frames are gathered in one buffer and flushed once per event-loop turn, or every `flushBatch` requests: one TLS
/// record and one system call for many requests. One timer per connection checks the deadlines.
final class APNsConnectionHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    /// A request the connection has taken: waiting for a stream, then on one.
    private struct Exchange {
        var request: APNsRequest
        var authorization: String
        /// Where the outcome goes: the request's place in the batch it came in.
        var reply: BatchReply
        var index: Int
        var deadline: NIODeadline
        /// When its stream opened, for ``APNsMetrics/requestDuration``.
        var openedAt = NIODeadline.uptimeNanoseconds(0)
        var sendWindow = 0
        /// How much of the request's payload has gone out in DATA frames.
        var bodySent = 0
        var status: Int?
        var apnsID: String?
        var body: [UInt8] = []
    }

    let load: ConnectionLoad
    private let authority: String
    private let requestTimeout: TimeAmount
    private let maxStreams: Int
    private var context: ChannelHandlerContext?
    private var streams: [UInt32: Exchange] = [:]
    private var waiting = CircularBuffer<Exchange>()
    /// Streams whose body waits for flow-control window, in order.
    private var blockedBodies = CircularBuffer<UInt32>()
    /// The server's `SETTINGS_MAX_CONCURRENT_STREAMS` capped by `maxStreams`; APNs starts at 1.
    private var streamLimit = 1
    private var nextStreamID: UInt32 = 1
    private var ids = APNsIDGenerator()
    private var encoder = RequestHeaderEncoder()
    private var decoder: HPACKDecoder
    private var reader = HTTP2FrameReader(expectingPreface: false)
    private var outbound: ByteBuffer
    private var connectionSendWindow = HTTP2Wire.defaultWindowSize
    private var initialStreamSendWindow = HTTP2Wire.defaultWindowSize
    private var receiveWindow = ConnectionReceiveWindow()
    private var flushScheduled = false
    private var unflushedRequests = 0
    private var deadlineTimer: RepeatedTask?

    /// Requests written before a flush even within one event-loop turn, so that the server starts on them while the
    /// rest are still being written.
    private static let flushBatch = 16

    /// The largest stream id (31 bits).
    private static let maxStreamID: UInt32 = 0x7FFF_FFFF

    init(authority: String, requestTimeout: TimeAmount, maxStreams: Int, load: ConnectionLoad) {
        self.authority = authority
        self.requestTimeout = requestTimeout
        self.maxStreams = maxStreams
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
        guard let context = self.context, !self.load.isClosing.load(ordering: .relaxed) else {
            self.load.inFlight.subtract(requests.count, ordering: .relaxed)
            for index in requests.indices { reply.resolve(index, with: .notProcessed) }
            return
        }
        let deadline = NIODeadline.now() + self.requestTimeout
        for (index, request) in requests.enumerated() {
            let exchange = Exchange(request: request, authorization: authorization, reply: reply, index: index, deadline: deadline)
            if self.load.isClosing.load(ordering: .relaxed) {
                self.resume(exchange, with: .notProcessed)  // a GOAWAY arrived while the batch was being written
            } else if self.streams.count < self.streamLimit {
                self.open(exchange, context: context)
            } else {
                self.waiting.append(exchange)
            }
        }
    }

    /// Writes the exchange's request on a new stream: HEADERS, then DATA when the flow-control windows allow.
    private func open(_ exchange: Exchange, context: ChannelHandlerContext) {
        guard self.nextStreamID <= Self.maxStreamID else {
            // Stream ids are spent (RFC 9113 §5.1.1): this connection takes no more; the pool opens another.
            self.load.isClosing.store(true, ordering: .relaxed)
            self.resume(exchange, with: .notProcessed)
            self.releaseWaiting()
            self.closeIfDrained(context: context)
            return
        }
        let streamID = self.nextStreamID
        self.nextStreamID += 2
        var exchange = exchange
        exchange.openedAt = .now()
        exchange.sendWindow = self.initialStreamSendWindow
        let request = exchange.request
        let hasBody = !request.payload.isEmpty

        // The HEADERS frame's length is known once the block is encoded: write the header, then fix its length.
        let frameStart = self.outbound.writerIndex
        self.outbound.writeHTTP2FrameHeader(length: 0, type: .headers, flags: hasBody ? .endHeaders : [.endHeaders, .endStream], streamID: streamID)
        self.encoder.encode(
            request,
            authority: self.authority,
            authorization: exchange.authorization,
            apnsID: (request.apnsID ?? self.ids.next()).lowercaseString,
            into: &self.outbound
        )
        let length = self.outbound.writerIndex - frameStart - 9
        self.outbound.setInteger(UInt8(truncatingIfNeeded: length >> 16), at: frameStart)
        self.outbound.setInteger(UInt16(truncatingIfNeeded: length), at: frameStart + 1)

        self.streams[streamID] = exchange
        if hasBody, !self.blockedBodies.isEmpty || !self.writeBody(of: streamID) {
            self.blockedBodies.append(streamID)
        }
        self.requestWritten(context: context)
    }

    /// Writes as much of the stream's body as both windows allow, in DATA frames, the last one ending the stream;
    /// `true` once all of it is written. A window smaller than the body is used up and the rest waits for
    /// WINDOW_UPDATE: a peer may well send those only as it receives DATA (RFC 9113 §6.9).
    private func writeBody(of streamID: UInt32) -> Bool {
        guard let exchange = self.streams[streamID] else { return true }  // already answered or timed out
        let payload = exchange.request.payload
        let sendable = min(payload.count - exchange.bodySent, self.connectionSendWindow, exchange.sendWindow)
        guard sendable > 0 else { return false }
        self.connectionSendWindow -= sendable
        self.streams[streamID]!.sendWindow -= sendable
        var offset = exchange.bodySent
        let stop = offset + sendable
        while offset < stop {
            let end = min(offset + HTTP2Wire.defaultMaxFrameSize, stop)
            self.outbound.writeHTTP2FrameHeader(length: end - offset, type: .data, flags: end == payload.count ? .endStream : [], streamID: streamID)
            self.outbound.writeBytes(payload[offset..<end])
            offset = end
        }
        self.streams[streamID]!.bodySent = stop
        return stop == payload.count
    }

    /// Writes the waiting bodies, in order, as far as the windows allow.
    private func writeBlockedBodies() {
        while let streamID = self.blockedBodies.first, self.writeBody(of: streamID) {
            self.blockedBodies.removeFirst()
        }
    }

    /// Opens streams for waiting requests while the limit allows.
    private func openWaiting(context: ChannelHandlerContext) {
        while self.streams.count < self.streamLimit, let exchange = self.waiting.popFirst() {
            self.open(exchange, context: context)
        }
    }

    // MARK: Writing

    /// Flushes every `flushBatch` requests, and once the requests already queued on the event loop are written.
    private func requestWritten(context: ChannelHandlerContext) {
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
        do throws(HTTP2Wire.ErrorCode) {
            while let frame = try self.reader.next() {
                try self.receive(frame, context: context)
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
        case .data(let streamID, let data, let flowControlledLength, let endStream):
            // Streams end after one small body, so only the connection's window needs giving back.
            self.receiveWindow.consume(flowControlledLength, writingUpdateTo: &self.outbound)
            self.streams[streamID]?.body.append(contentsOf: data.readableBytesView)
            if endStream { self.finish(streamID) }
        case .headers(let streamID, let block, let endStream):
            try self.receiveHeaders(block, streamID: streamID, endStream: endStream)
        case .rstStream(let streamID, let errorCode):
            self.close(streamID, with: errorCode == HTTP2Wire.ErrorCode.refusedStream.rawValue ? .notProcessed : .response(.noResponse))
        case .settings(let settings):
            try self.receiveSettings(settings, context: context)
        case .settingsAck:
            break
        case .ping(let opaqueData, let ack):
            if !ack { self.outbound.writeHTTP2Ping(opaqueData: opaqueData, ack: true) }
        case .goAway(let lastStreamID, _):
            self.goAway(lastStreamID: lastStreamID, context: context)
        case .windowUpdate(let streamID, let increment):
            if streamID == 0 {
                try HTTP2Wire.grow(&self.connectionSendWindow, by: increment)
            } else if self.streams[streamID] != nil {
                try HTTP2Wire.grow(&self.streams[streamID]!.sendWindow, by: increment)
            }
            self.writeBlockedBodies()
        case .pushPromise:
            throw .protocolError  // we said SETTINGS_ENABLE_PUSH = 0
        }
    }

    /// A complete header block: always decoded (HPACK's table depends on it), kept if its stream is ours.
    private func receiveHeaders(_ block: ByteBuffer, streamID: UInt32, endStream: Bool) throws(HTTP2Wire.ErrorCode) {
        var block = block
        let headers: HPACKHeaders
        do {
            headers = try self.decoder.decodeHeaders(from: &block)
        } catch {
            throw .compressionError
        }
        if self.streams[streamID]?.status == nil, let status = headers.first(name: ":status").flatMap(Int.init) {
            self.streams[streamID]?.status = status
            self.streams[streamID]?.apnsID = headers.first(name: "apns-id")
        }
        if endStream { self.finish(streamID) }
    }

    private func receiveSettings(_ settings: [(identifier: UInt16, value: UInt32)], context: ChannelHandlerContext) throws(HTTP2Wire.ErrorCode) {
        for (identifier, value) in settings {
            switch HTTP2Wire.Setting(rawValue: identifier) {
            case .headerTableSize:
                self.encoder.setPeerTableSize(Int(value))
            case .maxConcurrentStreams:
                self.streamLimit = min(Int(value), self.maxStreams)
                self.load.streamLimit.store(self.streamLimit, ordering: .relaxed)
            case .initialWindowSize:
                guard value <= 0x7FFF_FFFF else { throw .flowControlError }
                let delta = Int(value) - self.initialStreamSendWindow
                self.initialStreamSendWindow = Int(value)
                for streamID in self.streams.keys { try HTTP2Wire.grow(&self.streams[streamID]!.sendWindow, by: delta) }
            default:
                break  // our frames are far below any MAX_FRAME_SIZE; the rest do not concern a client
            }
        }
        self.outbound.writeHTTP2FrameHeader(length: 0, type: .settings, flags: .ack, streamID: 0)
        self.writeBlockedBodies()
        self.openWaiting(context: context)
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
        self.load.isClosing.store(true, ordering: .relaxed)
        // Written but unanswered: APNs may or may not have processed these.
        for streamID in self.streams.keys {
            self.close(streamID, with: .response(.noResponse))
        }
        self.releaseWaiting()
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }

    /// Streams up to `lastStreamID` are still answered; the others, and waiting requests, go to another connection.
    private func goAway(lastStreamID: UInt32, context: ChannelHandlerContext) {
        self.load.isClosing.store(true, ordering: .relaxed)
        for streamID in self.streams.keys where streamID > lastStreamID {
            self.close(streamID, with: .notProcessed)
        }
        self.releaseWaiting()
        self.closeIfDrained(context: context)
    }

    /// Ends the connection after a protocol error by the server.
    private func fail(_ error: HTTP2Wire.ErrorCode, context: ChannelHandlerContext) {
        self.outbound.writeHTTP2GoAway(lastStreamID: 0, error: error)
        self.flush(context: context)
        context.close(promise: nil)
    }

    // MARK: Outcomes

    private func finish(_ streamID: UInt32) {
        guard let exchange = self.streams[streamID] else { return }
        let response: APNsResponse =
            switch exchange.status {
            case 200: .accepted(apnsID: exchange.apnsID ?? "")
            case let status?: .rejected(status: status, body: exchange.body)
            case nil: .noResponse
            }
        if exchange.status != nil { APNsMetrics.requestDuration.recordNanoseconds((NIODeadline.now() - exchange.openedAt).nanoseconds) }
        self.close(streamID, with: .response(response))
    }

    /// Cancels the streams whose answer is overdue, and gives up on requests that waited too long for a stream.
    private func timeOutOverdueRequests() {
        guard let context = self.context else { return }
        let now = NIODeadline.now()
        while let first = self.waiting.first, first.deadline <= now {
            self.waiting.removeFirst()
            self.resume(first, with: .response(.noResponse))
        }
        let overdue = self.streams.filter { $0.value.deadline <= now }.keys
        guard !overdue.isEmpty else { return }
        for streamID in overdue {
            self.outbound.writeHTTP2ResetStream(streamID: streamID, error: .cancel)
            self.close(streamID, with: .response(.noResponse))
        }
        self.flush(context: context)
    }

    /// Ends a stream's exchange and gives its stream to the next waiting request.
    private func close(_ streamID: UInt32, with outcome: StreamOutcome) {
        guard let exchange = self.streams.removeValue(forKey: streamID) else { return }
        self.resume(exchange, with: outcome)
        guard let context = self.context else { return }
        if self.load.isClosing.load(ordering: .relaxed) {
            self.closeIfDrained(context: context)
        } else {
            self.openWaiting(context: context)
        }
    }

    /// Hands waiting requests back unsent: the connection is going away.
    private func releaseWaiting() {
        while let exchange = self.waiting.popFirst() {
            self.resume(exchange, with: .notProcessed)
        }
    }

    private func resume(_ exchange: Exchange, with outcome: StreamOutcome) {
        self.load.inFlight.subtract(1, ordering: .relaxed)
        exchange.reply.resolve(exchange.index, with: outcome)
    }

    private func closeIfDrained(context: ChannelHandlerContext) {
        if self.streams.isEmpty, context.channel.isActive {
            self.flush(context: context)
            context.close(promise: nil)
        }
    }
}
