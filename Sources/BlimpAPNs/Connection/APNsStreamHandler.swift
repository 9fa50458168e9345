import BlimpCore
import NIOCore
import NIOHPACK
import NIOHTTP2

/// The client side of one APNs connection at the HTTP/2 frame level: one stream per request, no per-stream channels.
///
/// It numbers streams itself, reads the server's SETTINGS for the stream limit, handles GOAWAY (streams above the
/// last stream id are reported unprocessed), fails every open stream when the connection goes, times requests out,
/// keeps the inbound connection window open, and sends PING when idle. Every method runs on the channel's event loop.
final class APNsStreamHandler: ChannelInboundHandler {
    typealias InboundIn = HTTP2Frame
    typealias OutboundOut = HTTP2Frame

    private struct OpenStream {
        var promise: EventLoopPromise<StreamOutcome>
        var timeout: Scheduled<Void>?
        var status: Int?
        var apnsID: String?
        var body: [UInt8] = []
    }

    let load: ConnectionLoad
    private let authority: String
    private let requestTimeout: TimeAmount
    private var context: ChannelHandlerContext?
    private var streams: [HTTP2StreamID: OpenStream] = [:]
    private var nextStreamID = HTTP2StreamID(1)
    private var unreplenishedBytes = 0

    init(authority: String, requestTimeout: TimeAmount, load: ConnectionLoad) {
        self.authority = authority
        self.requestTimeout = requestTimeout
        self.load = load
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
    }

    /// Writes `request` on a new stream; `promise` completes with the outcome.
    func send(_ request: APNsRequest, authorization: String, promise: EventLoopPromise<StreamOutcome>) {
        guard let context = self.context, !self.load.isClosing.load(ordering: .relaxed) else {
            promise.succeed(.notProcessed)
            return
        }
        let streamID = self.nextStreamID
        self.nextStreamID = streamID.advanced(by: 2)
        self.load.inFlight.add(1, ordering: .relaxed)

        var headers = HPACKHeaders()
        headers.reserveCapacity(11)
        headers.add(name: ":method", value: "POST")
        headers.add(name: ":scheme", value: "https")
        headers.add(name: ":authority", value: self.authority)
        // The path holds the device token and changes every request: never index it (reference §1.2).
        headers.add(name: ":path", value: "/3/device/\(request.deviceToken.hex)", indexing: .neverIndexed)
        headers.add(name: "authorization", value: authorization)
        headers.add(name: "apns-push-type", value: request.pushType.rawValue)
        headers.add(name: "apns-topic", value: request.topic)
        headers.add(name: "apns-priority", value: String(request.priority))
        headers.add(name: "apns-id", value: request.apnsID.uuidString.lowercased(), indexing: .nonIndexable)
        if let expiration = request.expiration {
            headers.add(name: "apns-expiration", value: String(expiration), indexing: .nonIndexable)
        }
        if let collapseID = request.collapseID {
            headers.add(name: "apns-collapse-id", value: collapseID, indexing: .nonIndexable)
        }
        headers.add(name: "content-type", value: "application/json")

        let loopBound = NIOLoopBound(self, eventLoop: context.eventLoop)
        let timeout = context.eventLoop.scheduleTask(in: self.requestTimeout) {
            loopBound.value.timeOut(streamID)
        }
        self.streams[streamID] = OpenStream(promise: promise, timeout: timeout)
        context.write(self.wrapOutboundOut(HTTP2Frame(streamID: streamID, payload: .headers(.init(headers: headers)))), promise: nil)
        let body = context.channel.allocator.buffer(bytes: request.payload)
        context.writeAndFlush(
            self.wrapOutboundOut(HTTP2Frame(streamID: streamID, payload: .data(.init(data: .byteBuffer(body), endStream: true)))),
            promise: nil
        )
    }

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
                self.load.streamLimit.store(setting.value, ordering: .relaxed)
            }
        case .goAway(let lastStreamID, _, _):
            self.load.isClosing.store(true, ordering: .relaxed)
            for streamID in self.streams.keys where streamID > lastStreamID {
                self.close(streamID, with: .notProcessed)
            }
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
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if error is NIOHTTP2Errors.StreamError {
            return  // one stream failed; its RST_STREAM or timeout settles it.
        }
        context.close(promise: nil)
    }

    private func finish(_ streamID: HTTP2StreamID) {
        guard let stream = self.streams[streamID] else { return }
        let response: APNsResponse =
            switch stream.status {
            case 200: .accepted(apnsID: stream.apnsID ?? "")
            case let status?: .rejected(status: status, body: stream.body)
            case nil: .noResponse
            }
        self.close(streamID, with: .response(response))
    }

    private func timeOut(_ streamID: HTTP2StreamID) {
        guard self.streams[streamID] != nil, let context = self.context else { return }
        context.writeAndFlush(self.wrapOutboundOut(HTTP2Frame(streamID: streamID, payload: .rstStream(.cancel))), promise: nil)
        self.close(streamID, with: .response(.noResponse))
    }

    private func close(_ streamID: HTTP2StreamID, with outcome: StreamOutcome) {
        guard let stream = self.streams.removeValue(forKey: streamID) else { return }
        stream.timeout?.cancel()
        self.load.inFlight.subtract(1, ordering: .relaxed)
        stream.promise.succeed(outcome)
        if self.load.isClosing.load(ordering: .relaxed), let context = self.context {
            self.closeIfDrained(context: context)
        }
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
