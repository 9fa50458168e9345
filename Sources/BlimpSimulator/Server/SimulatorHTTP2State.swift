import BlimpHTTP2
import NIOCore

/// The HTTP/2 state of one simulator connection, apart from its I/O: the streams the client opened and their requests
/// as they arrive, the stream limit APNs announces, the send windows for response bodies, the connection faults that
/// count streams, and going away. (What the connection remembers for ``SimulatedAPNs``, its provider token, is
/// ``SimulatorConnectionState``.)
///
/// ``SimulatorConnectionHandler`` tells it what happened (a frame read, a request answered, a response ready) and
/// performs the action an event returns, then those ``nextAction()`` returns until it returns `nil`. Nothing here
/// touches a channel or an event loop, so tests drive it directly.
struct SimulatorHTTP2State {
    /// What the handler does.
    enum Action {
        /// RST_STREAM `REFUSED_STREAM`: the stream is beyond the limit.
        case refuse(streamID: UInt32)
        /// RST_STREAM `PROTOCOL_ERROR`: the request's header block is malformed (RFC 9113 §8.1.1).
        case resetMalformed(streamID: UInt32)
        /// Close the connection without GOAWAY (the `dropEvery` fault).
        case drop
        /// Let ``SimulatedAPNs`` answer the complete request, then tell ``answered(hasValidProviderToken:settings:)``
        /// and, once the response is due, ``respond(to:body:)``.
        case answer(streamID: UInt32, request: SimulatorRequest)
        /// WINDOW_UPDATE: give the stream, still sending its request, back the window it used.
        case updateStreamWindow(streamID: UInt32, increment: Int)
        /// SETTINGS with this `MAX_CONCURRENT_STREAMS`.
        case announceStreamLimit(Int)
        /// GOAWAY with APNs's reason `Shutdown` (the `goAwayEvery` fault).
        case goAway(lastStreamID: UInt32)
        /// Response body bytes, as much as the send windows allow, ending the stream with the last of them.
        case sendBody(streamID: UInt32, body: ArraySlice<UInt8>, endStream: Bool)
        /// Flush, then close the connection's output: it is going away and every stream is answered. What the client
        /// still writes is read and discarded until it closes too.
        case closeOutput
    }

    /// A stream the client opened and that has not been answered (or reset).
    private struct Stream {
        var sendWindow: Int
        /// The request's header block while its body arrives; `nil` once it is being answered.
        var request: RequestHeaderBlock?
        var body: [UInt8] = []
    }

    /// A response body waiting for the send windows, or the rest of one.
    private struct UnsentBody {
        var streamID: UInt32
        var body: ArraySlice<UInt8>
    }

    /// The highest stream id the client opened: a GOAWAY's last stream id.
    private(set) var highestStreamID: UInt32 = 0
    private var streamLimit = 1
    private var streams: [UInt32: Stream] = [:]
    private var unsentBodies = CircularBuffer<UnsentBody>()
    /// Streams opened with a well-formed request, for the faults.
    private var streamsSeen = 0
    private var goingAway = false
    private var announcedLimit: Int?
    private var goAwayDue: UInt32?
    private var outputClosed = false
    private var connectionSendWindow = HTTP2Wire.defaultWindowSize
    private var initialStreamSendWindow = HTTP2Wire.defaultWindowSize

    /// More than any push type's largest payload (5120 bytes for VoIP): enough to see that a body is too large
    /// (413 PayloadTooLarge), never more.
    static let maxBufferedBody = 8192

    // MARK: Events

    /// A request's header block on a new stream (`request` is `nil` when malformed); `settings` decides the faults.
    ///
    /// - Throws: `PROTOCOL_ERROR` unless the stream id is odd and above every earlier one (trailers on an open stream
    ///   are not part of APNs's protocol either).
    mutating func headersReceived(
        streamID: UInt32, request: RequestHeaderBlock?, endStream: Bool, settings: ConnectionSettings
    ) throws(HTTP2Wire.ErrorCode) -> Action? {
        guard streamID % 2 == 1, streamID > self.highestStreamID else { throw .protocolError }
        self.highestStreamID = streamID
        guard !self.goingAway else { return nil }  // above the GOAWAY's last stream id: never processed
        guard self.streams.count < self.streamLimit else { return .refuse(streamID: streamID) }
        guard let request else { return .resetMalformed(streamID: streamID) }
        self.streamsSeen += 1
        self.streams[streamID] = Stream(sendWindow: self.initialStreamSendWindow, request: endStream ? nil : request)
        if settings.dropEvery > 0, self.streamsSeen % settings.dropEvery == 0 { return .drop }
        guard endStream else { return nil }
        return .answer(streamID: streamID, request: SimulatorRequest(method: request.method, path: request.path, headers: request.headers, body: []))
    }

    /// Request body bytes, `flowControlledLength` of them counted against flow control; the request is answered
    /// once it ends.
    mutating func dataReceived(
        streamID: UInt32, bytes: some Collection<UInt8>, flowControlledLength: Int, endStream: Bool
    ) -> Action? {
        guard let index = self.streams.index(forKey: streamID), let request = self.streams.values[index].request else {
            return nil  // reset, refused, never opened, or already ended
        }
        if self.streams.values[index].body.count <= Self.maxBufferedBody {
            self.streams.values[index].body.append(contentsOf: bytes)
        }
        guard endStream else {
            return flowControlledLength > 0 ? .updateStreamWindow(streamID: streamID, increment: flowControlledLength) : nil
        }
        let body = self.streams.values[index].body
        self.streams.values[index].request = nil
        self.streams.values[index].body = []
        return .answer(streamID: streamID, request: SimulatorRequest(method: request.method, path: request.path, headers: request.headers, body: body))
    }

    /// ``SimulatedAPNs`` answered a request. Like APNs, the stream limit rises from 1 once a valid provider token
    /// arrived (docs/references.md#apns-connections); the `goAwayEvery` fault sends GOAWAY: streams up to
    /// the highest one received are still answered, and the client sends those above it again elsewhere (RFC 9113 §6.8).
    mutating func answered(hasValidProviderToken: Bool, settings: ConnectionSettings) {
        if hasValidProviderToken, self.streamLimit == 1, settings.maxConcurrentStreams != 1 {
            self.streamLimit = settings.maxConcurrentStreams
            self.announcedLimit = settings.maxConcurrentStreams
        }
        if !self.goingAway, settings.goAwayEvery > 0, self.streamsSeen >= settings.goAwayEvery {
            self.goingAway = true
            self.goAwayDue = self.highestStreamID
        }
    }

    /// A response for `streamID` is due: `true` when the stream is still open (not reset meanwhile) and its HEADERS
    /// go out now. An empty body ends the stream with them; any other goes out from ``nextAction()`` after the bodies
    /// already waiting, as the send windows allow.
    mutating func respond(to streamID: UInt32, body: [UInt8]) -> Bool {
        guard self.streams[streamID] != nil else { return false }
        if body.isEmpty {
            self.streams[streamID] = nil
        } else {
            self.unsentBodies.append(UnsentBody(streamID: streamID, body: body[...]))
        }
        return true
    }

    /// RST_STREAM from the client: the stream is forgotten, and no response goes out.
    mutating func resetReceived(streamID: UInt32) {
        self.streams[streamID] = nil
    }

    /// The client's SETTINGS: only its initial stream window concerns the simulator (the response header encoder
    /// never indexes, so its HEADER_TABLE_SIZE does not matter).
    ///
    /// - Throws: `FLOW_CONTROL_ERROR` for a window past 2^31-1.
    mutating func settingsReceived(_ settings: [(identifier: UInt16, value: UInt32)]) throws(HTTP2Wire.ErrorCode) {
        for (identifier, value) in settings where HTTP2Wire.Setting(rawValue: identifier) == .initialWindowSize {
            try HTTP2Wire.changeInitialWindow(
                to: value, initial: &self.initialStreamSendWindow, streams: &self.streams, sendWindow: \.sendWindow)
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

    /// GOAWAY from the client: no new streams; the connection closes once the open ones are answered.
    mutating func goAwayReceived() {
        self.goingAway = true
    }

    // MARK: Actions

    /// The next thing to do, or `nil` when there is nothing until the next event.
    mutating func nextAction() -> Action? {
        if let limit = self.announcedLimit {
            self.announcedLimit = nil
            return .announceStreamLimit(limit)
        }
        if let lastStreamID = self.goAwayDue {
            self.goAwayDue = nil
            return .goAway(lastStreamID: lastStreamID)
        }
        while let unsent = self.unsentBodies.first {
            guard let window = self.streams[unsent.streamID]?.sendWindow else {
                self.unsentBodies.removeFirst()  // reset meanwhile
                continue
            }
            let count = min(unsent.body.count, self.connectionSendWindow, window)
            guard count > 0 else { break }
            let bytes = unsent.body.prefix(count)
            self.connectionSendWindow -= count
            let endStream = count == unsent.body.count
            if endStream {
                self.unsentBodies.removeFirst()
                self.streams[unsent.streamID] = nil
            } else {
                self.unsentBodies[self.unsentBodies.startIndex].body = unsent.body.dropFirst(count)
                self.streams[unsent.streamID]?.sendWindow -= count
            }
            return .sendBody(streamID: unsent.streamID, body: bytes, endStream: endStream)
        }
        // Only the output: closing both ways would reset the connection when the client writes again before it has
        // read the GOAWAY (a busy client does: answers free streams for its next requests), and a TCP reset destroys
        // the GOAWAY and the last answers still on their way.
        if self.goingAway, self.streams.isEmpty, !self.outputClosed {
            self.outputClosed = true
            return .closeOutput
        }
        return nil
    }
}
