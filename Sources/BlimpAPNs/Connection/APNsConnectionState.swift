import BlimpCore
import BlimpHTTP2
import NIOCore

/// The protocol state of one APNs connection, apart from its I/O: requests waiting for a stream, the streams in
/// flight and what their answers said so far, the server's SETTINGS, the send windows, GOAWAY and the deadlines.
///
/// ``APNsConnectionHandler`` tells it what happened (a request taken, a frame read, the deadline timer, the end of
/// the connection), then performs what ``nextAction(now:)`` returns until it returns `nil`. Nothing here touches a
/// channel or an event loop, so tests drive it directly. `Reply` says where a request's outcome goes; the state only
/// hands it back.
struct APNsConnectionState<Reply> {
    /// What the handler does next.
    enum Action {
        /// Stop giving this connection new requests (GOAWAY, connection lost, stream ids spent). Comes before the
        /// outcomes that follow from it, so that a request sent again goes to another connection.
        case stopTakingRequests
        /// Hand `outcome` to `reply`; `answeredIn` is the time since the stream opened, when the server answered.
        case complete(Reply, StreamOutcome, answeredIn: TimeAmount?)
        /// Write the request's HEADERS on the new stream `streamID`, then the first `bodyBytes` of its payload in
        /// DATA (ending the stream when that is all of it; an empty payload ends it with the HEADERS).
        case open(streamID: UInt32, request: APNsRequest, authorization: String, bodyBytes: Int)
        /// Write `bytes` of the stream's payload in DATA, the last frame ending the stream when `endStream`.
        case sendData(streamID: UInt32, bytes: ArraySlice<UInt8>, endStream: Bool)
        /// Write RST_STREAM `CANCEL`: the answer is overdue.
        case cancel(streamID: UInt32)
        /// Flush and close the connection: it is going away and no stream is left.
        case close
    }

    /// A request taken and waiting for a stream.
    private struct Waiting {
        var request: APNsRequest
        var authorization: String
        var reply: Reply
        var deadline: NIODeadline
    }

    /// A request on its stream.
    private struct Stream {
        var reply: Reply
        var payload: [UInt8]
        var deadline: NIODeadline
        var openedAt: NIODeadline
        var sendWindow: Int
        /// How much of the payload has gone out.
        var bodySent = 0
        var status: Int?
        var apnsID: String?
        var uniqueID: String?
        var body: [UInt8] = []
    }

    /// An outcome waiting to be handed back.
    private struct Completion {
        var reply: Reply
        var outcome: StreamOutcome
        /// When the answered stream opened; `nil` without an answer.
        var openedAt: NIODeadline? = nil
    }

    /// Whether the connection takes requests.
    private enum Phase {
        case open
        /// GOAWAY, or stream ids spent: the streams left are answered, then the connection closes.
        case closing
        /// Closed, or asked to close.
        case closed
    }

    /// The server's `SETTINGS_MAX_CONCURRENT_STREAMS` capped by `maxStreams`; APNs starts at 1.
    private(set) var streamLimit = 1
    private let maxStreams: Int
    private let requestTimeout: TimeAmount
    private var phase = Phase.open
    private var toldToStopTaking = false
    private var streams: [UInt32: Stream] = [:]
    private var waiting = CircularBuffer<Waiting>()
    private var completions = CircularBuffer<Completion>()
    private var overdueStreams = CircularBuffer<UInt32>()
    /// Streams whose payload has not all gone out, in order: the first waits for window, the rest behind it.
    private var unsentBodies = CircularBuffer<UInt32>()
    private var nextStreamID: UInt32
    private var connectionSendWindow = HTTP2Wire.defaultWindowSize
    private var initialStreamSendWindow = HTTP2Wire.defaultWindowSize

    /// The largest stream id (31 bits).
    private static var maxStreamID: UInt32 { 0x7FFF_FFFF }

    /// - Parameters:
    ///   - maxStreams: the most streams open at once, whatever the server allows.
    ///   - requestTimeout: how long a request may wait for a stream and its answer together.
    ///   - firstStreamID: the first stream id to use (tests start near the end of the ids).
    init(maxStreams: Int, requestTimeout: TimeAmount, firstStreamID: UInt32 = 1) {
        self.maxStreams = maxStreams
        self.requestTimeout = requestTimeout
        self.nextStreamID = firstStreamID
    }

    // MARK: Events

    /// Takes a request: it opens a stream once the stream limit allows, in order. A connection that no longer takes
    /// requests hands it back unprocessed.
    mutating func enqueue(_ request: APNsRequest, authorization: String, reply: Reply, now: NIODeadline) {
        guard self.phase == .open else {
            self.completions.append(Completion(reply: reply, outcome: .notProcessed))
            return
        }
        self.waiting.append(Waiting(request: request, authorization: authorization, reply: reply, deadline: now + self.requestTimeout))
    }

    /// A response header block; the first one with a `:status` is the answer's (`apns-id`, and `apns-unique-id`
    /// from the sandbox).
    mutating func headersReceived(streamID: UInt32, status: Int?, apnsID: String?, uniqueID: String? = nil, endStream: Bool) {
        if let status, self.streams[streamID]?.status == nil {
            self.streams[streamID]?.status = status
            self.streams[streamID]?.apnsID = apnsID
            self.streams[streamID]?.uniqueID = uniqueID
        }
        if endStream { self.finish(streamID) }
    }

    /// Response body bytes.
    mutating func dataReceived(streamID: UInt32, data: ByteBuffer, endStream: Bool) {
        self.streams[streamID]?.body.append(contentsOf: data.readableBytesView)
        if endStream { self.finish(streamID) }
    }

    /// RST_STREAM: `REFUSED_STREAM` means not processed (RFC 9113 §8.7), anything else no answer.
    mutating func resetReceived(streamID: UInt32, errorCode: UInt32) {
        let refused = errorCode == HTTP2Wire.ErrorCode.refusedStream.rawValue
        self.close(streamID, with: refused ? .notProcessed : .response(.noResponse))
    }

    /// The server's SETTINGS: its stream limit and initial stream window (the rest do not concern the state).
    ///
    /// - Throws: `FLOW_CONTROL_ERROR` for a window past 2^31-1 (RFC 9113 §6.5.2, §6.9.2).
    mutating func settingsReceived(_ settings: [(identifier: UInt16, value: UInt32)]) throws(HTTP2Wire.ErrorCode) {
        for (identifier, value) in settings {
            switch HTTP2Wire.Setting(rawValue: identifier) {
            case .maxConcurrentStreams:
                self.streamLimit = min(Int(value), self.maxStreams)
            case .initialWindowSize:
                try HTTP2Wire.changeInitialWindow(
                    to: value, initial: &self.initialStreamSendWindow, streams: &self.streams, sendWindow: \.sendWindow)
            default:
                break
            }
        }
    }

    /// WINDOW_UPDATE for the connection (stream 0) or a stream.
    ///
    /// - Throws: `FLOW_CONTROL_ERROR` for a window past 2^31-1.
    mutating func windowUpdateReceived(streamID: UInt32, increment: Int) throws(HTTP2Wire.ErrorCode) {
        if streamID == 0 {
            try HTTP2Wire.grow(&self.connectionSendWindow, by: increment)
        } else if self.streams[streamID] != nil {
            try HTTP2Wire.grow(&self.streams[streamID]!.sendWindow, by: increment)
        }
    }

    /// GOAWAY: streams up to `lastStreamID` are still answered; the others, and the waiting requests, were not
    /// processed and go to another connection.
    mutating func goAwayReceived(lastStreamID: UInt32) {
        if self.phase == .open { self.phase = .closing }
        for streamID in self.streams.keys.filter({ $0 > lastStreamID }) {
            self.close(streamID, with: .notProcessed)
        }
        self.releaseWaiting()
    }

    /// The deadline timer: streams whose answer is overdue are cancelled, and requests that waited too long for a
    /// stream given up, both without an answer.
    mutating func timeOut(now: NIODeadline) {
        while let first = self.waiting.first, first.deadline <= now {
            self.waiting.removeFirst()
            self.completions.append(Completion(reply: first.reply, outcome: .response(.noResponse)))
        }
        guard self.streams.values.contains(where: { $0.deadline <= now }) else { return }
        for streamID in self.streams.compactMap({ $0.value.deadline <= now ? $0.key : nil }) {
            self.overdueStreams.append(streamID)
            self.close(streamID, with: .response(.noResponse))
        }
    }

    /// The connection is gone: written but unanswered requests may or may not have been processed (no answer);
    /// waiting ones certainly were not.
    mutating func connectionClosed() {
        self.phase = .closed
        for stream in self.streams.values {
            self.completions.append(Completion(reply: stream.reply, outcome: .response(.noResponse)))
        }
        self.streams.removeAll()
        self.unsentBodies.removeAll()
        self.overdueStreams.removeAll()
        self.releaseWaiting()
    }

    // MARK: Actions

    /// The next thing to do, or `nil` when there is nothing until the next event. `now` stamps the streams it opens.
    mutating func nextAction(now: NIODeadline) -> Action? {
        if self.phase != .open, !self.toldToStopTaking {
            self.toldToStopTaking = true
            return .stopTakingRequests
        }
        if let completion = self.completions.popFirst() {
            return .complete(completion.reply, completion.outcome, answeredIn: completion.openedAt.map { now - $0 })
        }
        if let streamID = self.overdueStreams.popFirst() {
            return .cancel(streamID: streamID)
        }
        if let data = self.nextUnsentData() {
            return data
        }
        if self.phase == .open, self.streams.count < self.streamLimit, let request = self.waiting.popFirst() {
            return self.open(request, now: now)
        }
        if self.phase == .closing, self.streams.isEmpty {
            self.phase = .closed
            return .close
        }
        return nil
    }

    /// Opens a stream for `request`, sending as much of its body as the windows allow unless bodies wait before it.
    private mutating func open(_ request: Waiting, now: NIODeadline) -> Action? {
        guard self.nextStreamID <= Self.maxStreamID else {
            // Stream ids are spent (RFC 9113 §5.1.1): this connection takes no more; the pool opens another.
            self.phase = .closing
            self.completions.append(Completion(reply: request.reply, outcome: .notProcessed))
            self.releaseWaiting()
            return self.nextAction(now: now)
        }
        let streamID = self.nextStreamID
        self.nextStreamID += 2
        let payload = request.request.payload
        var stream = Stream(reply: request.reply, payload: payload, deadline: request.deadline, openedAt: now, sendWindow: self.initialStreamSendWindow)
        if !payload.isEmpty {
            if self.unsentBodies.isEmpty {
                stream.bodySent = min(payload.count, self.connectionSendWindow, stream.sendWindow)
                self.connectionSendWindow -= stream.bodySent
                stream.sendWindow -= stream.bodySent
            }
            if stream.bodySent < payload.count { self.unsentBodies.append(streamID) }
        }
        self.streams[streamID] = stream
        return .open(streamID: streamID, request: request.request, authorization: request.authorization, bodyBytes: stream.bodySent)
    }

    /// As much of the first unsent body as both windows allow. A window smaller than the body is used up and the
    /// rest waits for WINDOW_UPDATE: a peer may well send those only as it receives DATA (RFC 9113 §6.9).
    private mutating func nextUnsentData() -> Action? {
        while let streamID = self.unsentBodies.first {
            guard var stream = self.streams[streamID] else {
                self.unsentBodies.removeFirst()  // answered or timed out meanwhile
                continue
            }
            let sendable = min(stream.payload.count - stream.bodySent, self.connectionSendWindow, stream.sendWindow)
            guard sendable > 0 else { return nil }
            let start = stream.bodySent
            stream.bodySent += sendable
            stream.sendWindow -= sendable
            self.connectionSendWindow -= sendable
            self.streams[streamID] = stream
            let endStream = stream.bodySent == stream.payload.count
            if endStream { self.unsentBodies.removeFirst() }
            return .sendData(streamID: streamID, bytes: stream.payload[start..<stream.bodySent], endStream: endStream)
        }
        return nil
    }

    // MARK: Outcomes

    /// The stream's answer is complete.
    private mutating func finish(_ streamID: UInt32) {
        guard let stream = self.streams.removeValue(forKey: streamID) else { return }
        let response: APNsResponse =
            switch stream.status {
            case 200: .accepted(apnsID: stream.apnsID ?? "", uniqueID: stream.uniqueID)
            case let status?: .rejected(status: status, body: stream.body)
            case nil: .noResponse
            }
        let openedAt = stream.status == nil ? nil : stream.openedAt
        self.completions.append(Completion(reply: stream.reply, outcome: .response(response), openedAt: openedAt))
    }

    /// Ends a stream without an answer.
    private mutating func close(_ streamID: UInt32, with outcome: StreamOutcome) {
        guard let stream = self.streams.removeValue(forKey: streamID) else { return }
        self.completions.append(Completion(reply: stream.reply, outcome: outcome))
    }

    /// Hands the waiting requests back unsent: the connection is going away.
    private mutating func releaseWaiting() {
        while let request = self.waiting.popFirst() {
            self.completions.append(Completion(reply: request.reply, outcome: .notProcessed))
        }
    }
}
