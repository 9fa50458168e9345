import BlimpCore
import BlimpStore
import Foundation
import Hummingbird
import Logging
import ServiceLifecycle

/// `POST /api/events`: the app's events as one long response of newline-delimited JSON, as Airship's Real-Time Data
/// Streaming serves them (https://docs.airship.com/developer/rest-api/connect/), so that Airship's own client
/// (`uaconnect`) reads Blimp given its base URL. Master secret or an API token.
///
/// The body says where to start and which events to send (``EventStreamRequest``). The stream reads the log after
/// its offset in batches, and waits ``pollInterval`` when it has caught up. A blank line, Airship's keepalive, also
/// tells the reader it has caught up (``send(_:appID:after:opening:to:logger:)``). The request deadline does not cut a stream: it ends when the client goes, when the api process shuts down, or on a
/// database error (the client resumes from its offset). An app has at most ``StreamSlots/perApp`` streams open on
/// each api process.
struct EventStreamController: Sendable {
    let auth: Authenticator
    let log: EventLog
    let slots: StreamSlots

    /// The media type of the stream, which its `Accept` names.
    static let contentType = "application/vnd.urbanairship+x-ndjson; version=3;"
    static let pollInterval: Duration = .milliseconds(250)
    static let keepaliveInterval: Duration = .seconds(10)
    /// Events read from the log at once: what a stream holds in memory, whatever its reader's speed (a write waits
    /// for the client to take the previous one).
    static let batch = 500
    /// The largest body: a stream's filters.
    static let maximumBody = 64 * 1024

    func addRoutes(to router: RouterGroup<some RequestContext>) {
        router.post("events") { request, context in try await self.open(request, context: context) }
    }

    private func open(_ request: Request, context: some RequestContext) async throws -> Response {
        let caller = try await self.auth.master(request)
        let stream: EventStreamRequest
        do {
            stream = try EventStreamRequest(parsing: try await Self.body(of: request))
        } catch let field as InvalidField {
            throw AirshipError.invalid(field)
        }
        if case .after(let offset) = stream.start, let trimmed = try await self.log.trimmed(appID: caller.app.id), offset < trimmed {
            throw AirshipError.invalid(InvalidField(
                "resume_offset", "events after this offset are past their retention and deleted; start from EARLIEST"))
        }
        // One snapshot says both where a stream from the latest event starts and which transactions it waits out.
        let horizon = try await self.log.horizon()
        let start = EventLog.offset(for: stream.start, at: horizon)
        let opening = horizon.next
        guard let slot = self.slots.take(appID: caller.app.id) else {
            throw AirshipError.tooManyRequests(
                "the app has \(StreamSlots.perApp) event streams open on this server", retryAfter: Self.keepaliveInterval)
        }
        let appID = caller.app.id
        let logger = context.logger
        return Response(status: .ok, headers: [.contentType: Self.contentType], body: ResponseBody { writer in
            try await self.send(stream, appID: appID, after: start, opening: opening, to: &writer, logger: logger)
            // The slot is held as long as the stream runs, and goes back with the response if it never does.
            withExtendedLifetime(slot) {}
        })
    }

    /// The body as JSON; an empty body is no body.
    private static func body(of request: Request) async throws -> RawJSON? {
        var request = request
        let bytes = try await request.collectBody(upTo: Self.maximumBody)
        guard bytes.readableBytes > 0 else { return nil }
        do {
            return try RawJSONParser.parse(bytes.readableBytesView)
        } catch {
            throw AirshipError.malformed(error)
        }
    }

    /// Writes the app's events after `offset` that `stream` sends, until the client goes or the process shuts down.
    /// A blank line goes out when the stream first has every event committed before it opened (every transaction
    /// running before `opening` has ended and the log is read to its end), then each time it catches up after sending
    /// events, and after ``keepaliveInterval`` without a line.
    private func send(
        _ stream: EventStreamRequest, appID: Int64, after offset: EventOffset, opening: UInt64, to writer: inout any ResponseBodyWriter,
        logger: Logger
    ) async throws {
        var offset = offset
        var opening: UInt64? = opening
        var owesKeepalive = true
        var lastWrite = ContinuousClock.now
        logger.debug("event stream opened", metadata: ["offset": "\(offset.text)"])
        while !Task.isCancelled, !Task.isShuttingDownGracefully {
            let events: [StreamedEvent]
            var settled = true
            do {
                if let opening { settled = try await self.log.horizon().oldestRunning >= opening }
                events = try await self.log.events(appID: appID, after: offset, limit: Self.batch)
            } catch {
                logger.warning("event stream ended: the log could not be read", metadata: ["error": "\(error)"])
                break
            }
            var bytes: [UInt8] = []
            for event in events where stream.sends(event) {
                event.json.write(to: &bytes)
                bytes.append(UInt8(ascii: "\n"))
            }
            if !bytes.isEmpty { owesKeepalive = true }
            if let last = events.last {
                offset = last.offset
                if bytes.isEmpty, stream.offsetUpdates, lastWrite.duration(to: .now) >= .seconds(1) {
                    Self.offsetUpdate(offset).write(to: &bytes)
                    bytes.append(UInt8(ascii: "\n"))
                }
            }
            let caughtUp = events.count < Self.batch
            if caughtUp, settled { opening = nil }
            if caughtUp, (owesKeepalive && opening == nil) || lastWrite.duration(to: .now) >= Self.keepaliveInterval {
                bytes.append(UInt8(ascii: "\n"))
                owesKeepalive = false
            }
            if !bytes.isEmpty {
                try await writer.write(ByteBuffer(bytes: bytes))
                lastWrite = .now
            }
            if caughtUp {
                try? await cancelWhenGracefulShutdown { try await Task.sleep(for: Self.pollInterval) }
            }
        }
        logger.debug("event stream closed", metadata: ["offset": "\(offset.text)"])
        try await writer.finish(nil)
    }

    /// An `OFFSET_UPDATE` line: the stream has read through `offset` and sent nothing of it.
    static func offsetUpdate(_ offset: EventOffset) -> RawJSON {
        let now = StreamedEvent.format(Date())
        return .object([
            .init("id", .string(UUID().lowercaseString)), .init("type", .string("OFFSET_UPDATE")),
            .init("offset", .string(offset.text)), .init("occurred", .string(now)), .init("processed", .string(now)),
            .init("body", .object([])),
        ])
    }
}
