import Foundation
import NIOCore
import NIOHPACK
import NIOHTTP2

/// Serves one APNs connection at the HTTP/2 frame level: it collects each stream's HEADERS and DATA, lets
/// ``SimulatedAPNs`` answer, and writes the response frames, with no per-stream channels (the fast path).
///
/// It also keeps the connection's flow-control window open, raises `MAX_CONCURRENT_STREAMS` after the first valid
/// provider token, and applies connection faults (GOAWAY, dropped connections, latency).
final class SimulatorConnectionHandler: ChannelInboundHandler {
    typealias InboundIn = HTTP2Frame
    typealias OutboundOut = HTTP2Frame

    private struct PendingRequest {
        var headers: HPACKHeaders
        var body: [UInt8] = []
    }

    private let apns: SimulatedAPNs
    private let settings: SharedConnectionSettings
    private var connection = SimulatorConnectionState()
    private var pending: [HTTP2StreamID: PendingRequest] = [:]
    private var streamsSeen = 0
    private var highestStreamID = HTTP2StreamID(0)
    /// Streams received and not yet answered; after GOAWAY the connection closes when this reaches zero.
    private var unanswered = 0
    private var streamLimitRaised = false
    private var goingAway = false
    /// Body bytes received since the connection window was last replenished.
    private var unreplenishedBytes = 0

    init(apns: SimulatedAPNs, settings: SharedConnectionSettings) {
        self.apns = apns
        self.settings = settings
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = self.unwrapInboundIn(data)
        switch frame.payload {
        case .headers(let headers):
            guard !self.goingAway else { return }  // above the GOAWAY's last stream id: never processed
            self.streamsSeen += 1
            self.highestStreamID = max(self.highestStreamID, frame.streamID)
            self.unanswered += 1
            let settings = self.settings.current
            if settings.dropEvery > 0, self.streamsSeen % settings.dropEvery == 0 {
                context.close(promise: nil)
                return
            }
            let request = PendingRequest(headers: headers.headers)
            if headers.endStream {
                self.answer(frame.streamID, request, settings: settings, context: context)
            } else {
                self.pending[frame.streamID] = request
            }
        case .data(let data):
            guard case .byteBuffer(let buffer) = data.data else { return }
            self.replenishWindow(consumed: buffer.readableBytes, stream: frame.streamID, ended: data.endStream, context: context)
            guard var request = self.pending[frame.streamID] else { return }
            request.body.append(contentsOf: buffer.readableBytesView)
            if data.endStream {
                self.pending[frame.streamID] = nil
                self.answer(frame.streamID, request, settings: self.settings.current, context: context)
            } else {
                self.pending[frame.streamID] = request
            }
        case .rstStream:
            self.pending[frame.streamID] = nil
        default:
            break  // SETTINGS, PING and WINDOW_UPDATE are NIOHTTP2Handler's; PRIORITY is ignored, as APNs does.
        }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        context.flush()
    }

    private func answer(
        _ streamID: HTTP2StreamID,
        _ request: PendingRequest,
        settings: ConnectionSettings,
        context: ChannelHandlerContext
    ) {
        var method = ""
        var path = ""
        var headers: [(name: String, value: String)] = []
        headers.reserveCapacity(request.headers.count)
        for (name, value, _) in request.headers {
            switch name {
            case ":method": method = value
            case ":path": path = value
            case _ where name.hasPrefix(":"): break
            default: headers.append((name, value))
            }
        }
        let response = self.apns.handle(
            SimulatorRequest(method: method, path: path, headers: headers, body: request.body),
            connection: &self.connection
        )
        if self.connection.hasValidProviderToken, !self.streamLimitRaised {
            self.streamLimitRaised = true
            let limit = HTTP2Setting(parameter: .maxConcurrentStreams, value: settings.maxConcurrentStreams)
            context.write(self.wrapOutboundOut(HTTP2Frame(streamID: .rootStream, payload: .settings(.settings([limit])))), promise: nil)
        }
        if !self.goingAway, settings.goAwayEvery > 0, self.streamsSeen >= settings.goAwayEvery {
            self.goAway(context: context)
        }
        if settings.latencyMilliseconds > 0 {
            let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
            context.eventLoop.scheduleTask(in: .milliseconds(Int64(settings.latencyMilliseconds))) {
                let (handler, context) = loopBound.value
                handler.write(response, on: streamID, context: context)
                context.flush()
            }
        } else {
            self.write(response, on: streamID, context: context)
        }
    }

    private func write(_ response: SimulatorResponse, on streamID: HTTP2StreamID, context: ChannelHandlerContext) {
        self.unanswered -= 1
        defer { self.closeIfGoneAway(context: context) }
        var headers = HPACKHeaders()
        headers.add(name: ":status", value: String(response.status))
        // Unique per response: kept out of the HPACK dynamic table, where it would only evict useful entries.
        headers.add(name: "apns-id", value: response.apnsID, indexing: .nonIndexable)
        let body = response.body
        guard !body.isEmpty else {
            context.write(self.wrapOutboundOut(HTTP2Frame(streamID: streamID, payload: .headers(.init(headers: headers, endStream: true)))), promise: nil)
            return
        }
        headers.add(name: "content-type", value: "application/json")
        context.write(self.wrapOutboundOut(HTTP2Frame(streamID: streamID, payload: .headers(.init(headers: headers)))), promise: nil)
        let data = HTTP2Frame.FramePayload.Data(data: .byteBuffer(context.channel.allocator.buffer(bytes: body)), endStream: true)
        context.write(self.wrapOutboundOut(HTTP2Frame(streamID: streamID, payload: .data(data))), promise: nil)
    }

    /// GOAWAY with APNs's JSON reason. Streams up to the highest one received are still answered, then the
    /// connection closes; streams above it were never processed and the client must send them again on a new
    /// connection (reference: apns-live-activities.md §5.5).
    private func goAway(context: ChannelHandlerContext) {
        self.goingAway = true
        let reason = context.channel.allocator.buffer(string: #"{"reason":"Shutdown"}"#)
        let frame = HTTP2Frame(
            streamID: .rootStream,
            payload: .goAway(lastStreamID: self.highestStreamID, errorCode: .noError, opaqueData: reason)
        )
        context.write(self.wrapOutboundOut(frame), promise: nil)
    }

    private func closeIfGoneAway(context: ChannelHandlerContext) {
        guard self.goingAway, self.unanswered == 0 else { return }
        let channel = context.channel
        context.flush()
        context.eventLoop.assumeIsolated().execute { channel.close(promise: nil) }
    }

    /// Gives received body bytes back to the client: the connection window in batches, and the stream window while
    /// the stream is still sending.
    private func replenishWindow(consumed: Int, stream: HTTP2StreamID, ended: Bool, context: ChannelHandlerContext) {
        guard consumed > 0 else { return }
        if !ended {
            context.write(self.wrapOutboundOut(HTTP2Frame(streamID: stream, payload: .windowUpdate(windowSizeIncrement: consumed))), promise: nil)
        }
        self.unreplenishedBytes += consumed
        if self.unreplenishedBytes >= 16_384 {
            context.write(self.wrapOutboundOut(HTTP2Frame(streamID: .rootStream, payload: .windowUpdate(windowSizeIncrement: self.unreplenishedBytes))), promise: nil)
            self.unreplenishedBytes = 0
        }
    }
}
