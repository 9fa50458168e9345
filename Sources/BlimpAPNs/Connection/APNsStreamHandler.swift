import BlimpCore
import NIOCore
import NIOHPACK
import NIOHTTP2

/// The client side of one APNs connection at the HTTP/2 frame level: one stream per request, no per-stream channels.
///
/// It numbers streams itself and opens at most the server's `SETTINGS_MAX_CONCURRENT_STREAMS` (capped by
/// ``APNsClientConfiguration/maxStreamsPerConnection``) at once; requests beyond that wait here in order. It handles
/// GOAWAY (streams above the last stream id, and waiting requests, are reported unprocessed), fails every open stream
/// when the connection goes, times requests out, keeps the inbound connection window open, and sends PING when idle.
/// Every method runs on the channel's event loop.
///
/// Requests written in one event-loop turn share one flush (one TLS record, one system call), and one timer per
/// connection checks the deadlines: nothing is scheduled per request.
final class APNsStreamHandler: ChannelInboundHandler {
    typealias InboundIn = HTTP2Frame
    typealias OutboundOut = HTTP2Frame

    /// A request the connection has taken: waiting for a stream, then on one.
    private struct Exchange {
        var request: APNsRequest
        var authorization: String
        var continuation: UnsafeContinuation<StreamOutcome, Never>
        var deadline: NIODeadline
        var status: Int?
        var apnsID: String?
        var body: [UInt8] = []
    }

    let load: ConnectionLoad
    private let authority: String
    private let requestTimeout: TimeAmount
    private let maxStreams: Int
    private var context: ChannelHandlerContext?
    private var streams: [HTTP2StreamID: Exchange] = [:]
    private var waiting = CircularBuffer<Exchange>()
    /// The server's `SETTINGS_MAX_CONCURRENT_STREAMS` capped by `maxStreams`; APNs starts at 1.
    private var streamLimit = 1
    private var nextStreamID = HTTP2StreamID(1)
    private var ids = APNsIDGenerator()
    private var flushScheduled = false
    private var unflushedRequests = 0
    private var deadlineTimer: RepeatedTask?
    private var unreplenishedBytes = 0

    init(authority: String, requestTimeout: TimeAmount, maxStreams: Int, load: ConnectionLoad) {
        self.authority = authority
        self.requestTimeout = requestTimeout
        self.maxStreams = maxStreams
        self.load = load
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
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

    /// Takes `request`: written on a new stream now, or once a stream is free. `continuation` resumes with the outcome.
    func send(_ request: APNsRequest, authorization: String, continuation: UnsafeContinuation<StreamOutcome, Never>) {
        guard let context = self.context, !self.load.isClosing.load(ordering: .relaxed) else {
            continuation.resume(returning: .notProcessed)
            return
        }
        self.load.inFlight.add(1, ordering: .relaxed)
        let exchange = Exchange(
            request: request,
            authorization: authorization,
            continuation: continuation,
            deadline: .now() + self.requestTimeout
        )
        if self.streams.count < self.streamLimit {
            self.open(exchange, context: context)
        } else {
            self.waiting.append(exchange)
        }
    }

    /// Writes the exchange's request on a new stream.
    private func open(_ exchange: Exchange, context: ChannelHandlerContext) {
        let streamID = self.nextStreamID
        self.nextStreamID = streamID.advanced(by: 2)
        let request = exchange.request

        var headers = HPACKHeaders()
        headers.reserveCapacity(11)
        headers.add(name: ":method", value: "POST")
        headers.add(name: ":scheme", value: "https")
        headers.add(name: ":authority", value: self.authority)
        // The path holds the device token and changes every request: never index it (reference §1.2).
        headers.add(name: ":path", value: "/3/device/\(request.deviceToken.hex)", indexing: .neverIndexed)
        headers.add(name: "authorization", value: exchange.authorization)
        headers.add(name: "apns-push-type", value: request.pushType.rawValue)
        headers.add(name: "apns-topic", value: request.topic)
        headers.add(name: "apns-priority", value: String(request.priority))
        headers.add(name: "apns-id", value: (request.apnsID ?? self.ids.next()).apnsIDString, indexing: .nonIndexable)
        if let expiration = request.expiration {
            headers.add(name: "apns-expiration", value: String(expiration), indexing: .nonIndexable)
        }
        if let collapseID = request.collapseID {
            headers.add(name: "apns-collapse-id", value: collapseID, indexing: .nonIndexable)
        }
        headers.add(name: "content-type", value: "application/json")

        self.streams[streamID] = exchange
        context.write(self.wrapOutboundOut(HTTP2Frame(streamID: streamID, payload: .headers(.init(headers: headers)))), promise: nil)
        let body = context.channel.allocator.buffer(bytes: request.payload)
        context.write(
            self.wrapOutboundOut(HTTP2Frame(streamID: streamID, payload: .data(.init(data: .byteBuffer(body), endStream: true)))),
            promise: nil
        )
        self.scheduleFlush(context: context)
    }

    /// Opens streams for waiting requests while the limit allows.
    private func openWaiting(context: ChannelHandlerContext) {
        while self.streams.count < self.streamLimit, let exchange = self.waiting.popFirst() {
            self.open(exchange, context: context)
        }
    }

    /// Flushes once the requests already queued on the event loop have been written, or at once every
    /// `flushBatch` requests, so that the server starts on a large batch while the rest is still being written.
    private func scheduleFlush(context: ChannelHandlerContext) {
        self.unflushedRequests += 1
        if self.unflushedRequests >= Self.flushBatch {
            self.flush(context: context)
            return
        }
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
        guard self.unflushedRequests > 0 else { return }
        self.unflushedRequests = 0
        context.flush()
    }

    private static let flushBatch = 16

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = self.unwrapInboundIn(data)
        switch frame.payload {
        case .headers(let headers):
            if let status = headers.headers.first(name: ":status").flatMap(Int.init) {
                self.streams[frame.streamID]?.status = status
                self.streams[frame.streamID]?.apnsID = headers.headers.first(name: "apns-id")
            }
            if headers.endStream { self.finish(frame.streamID) }
        case .data(let data):
            if case .byteBuffer(let buffer) = data.data {
                self.streams[frame.streamID]?.body.append(contentsOf: buffer.readableBytesView)
                self.replenishConnectionWindow(consumed: buffer.readableBytes, context: context)
            }
            if data.endStream { self.finish(frame.streamID) }
        case .rstStream(let code):
            self.close(frame.streamID, with: code == .refusedStream ? .notProcessed : .response(.noResponse))
        case .settings(.settings(let settings)):
            for setting in settings where setting.parameter == .maxConcurrentStreams {
                self.streamLimit = min(setting.value, self.maxStreams)
                self.load.streamLimit.store(self.streamLimit, ordering: .relaxed)
            }
            self.openWaiting(context: context)
        case .goAway(let lastStreamID, _, _):
            self.load.isClosing.store(true, ordering: .relaxed)
            for streamID in self.streams.keys where streamID > lastStreamID {
                self.close(streamID, with: .notProcessed)
            }
            self.releaseWaiting()
            self.closeIfDrained(context: context)
        default:
            break
        }
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if event is IdleStateHandler.IdleStateEvent {
            let ping = HTTP2Frame(streamID: .rootStream, payload: .ping(HTTP2PingData(withInteger: 0), ack: false))
            context.writeAndFlush(self.wrapOutboundOut(ping), promise: nil)
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
        if error is NIOHTTP2Errors.StreamError {
            return  // one stream failed; its RST_STREAM or timeout settles it.
        }
        context.close(promise: nil)
    }

    private func finish(_ streamID: HTTP2StreamID) {
        guard let exchange = self.streams[streamID] else { return }
        let response: APNsResponse =
            switch exchange.status {
            case 200: .accepted(apnsID: exchange.apnsID ?? "")
            case let status?: .rejected(status: status, body: exchange.body)
            case nil: .noResponse
            }
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
            context.write(self.wrapOutboundOut(HTTP2Frame(streamID: streamID, payload: .rstStream(.cancel))), promise: nil)
            self.close(streamID, with: .response(.noResponse))
        }
        context.flush()
    }

    /// Ends a stream's exchange and gives its stream to the next waiting request.
    private func close(_ streamID: HTTP2StreamID, with outcome: StreamOutcome) {
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
        exchange.continuation.resume(returning: outcome)
    }

    private func closeIfDrained(context: ChannelHandlerContext) {
        if self.streams.isEmpty, context.channel.isActive { context.close(promise: nil) }
    }

    /// Gives received bytes back to the server in batches, so error bodies never exhaust the connection window.
    private func replenishConnectionWindow(consumed: Int, context: ChannelHandlerContext) {
        self.unreplenishedBytes += consumed
        guard self.unreplenishedBytes >= 16_384 else { return }
        let update = HTTP2Frame(streamID: .rootStream, payload: .windowUpdate(windowSizeIncrement: self.unreplenishedBytes))
        context.write(self.wrapOutboundOut(update), promise: nil)
        self.unreplenishedBytes = 0
    }
}
