import BlimpCore
import BlimpTestSupport
import Foundation
import Logging
import Synchronization

/// The APNs attempts the workers traced ("apns attempt"), per channel, so that a test which finds a token not
/// delivered can show what each of its attempts got back; and the parts they claimed and the leases they renewed and lost.
final class AttemptLog: Sendable {
    /// One attempt at one token.
    struct Attempt: Sendable, CustomStringConvertible {
        var metadata: Logger.Metadata

        var description: String {
            ["push.id", "part", "attempt", "response", "action"].map { "\($0)=\(self.metadata[$0].map { "\($0)" } ?? "-")" }
                .joined(separator: " ")
        }

        /// Which attempt at the token this was, from 1.
        var number: Int? { self.metadata["attempt"].flatMap { Int("\($0)") } }

        /// What APNs answered, as the client reported it.
        var response: String { self.metadata["response"].map { "\($0)" } ?? "" }

        var wasAccepted: Bool { self.response.hasPrefix("accepted") }
    }

    private let attempts = Mutex<[String: [Attempt]]>([:])
    private let leases = Mutex<[Lease]>([])

    /// A worker claiming a part, renewing its lease or losing it ("part claimed", "lease renewed", "lease lost").
    struct Lease: Sendable {
        enum Event: String, Sendable {
            case claimed = "part claimed", renewed = "lease renewed", lost = "lease lost"
        }

        var event: Event
        var pushID: String
    }

    /// A logger for a worker: it keeps the attempts and passes everything else on to the tests' logger.
    var logger: Logger {
        Logger(label: TestDatabase.logger.label) { _ in Handler(log: self, forwardingTo: TestDatabase.logger.handler) }
    }

    /// Every channel's attempts, in order.
    func histories() -> [String: [Attempt]] {
        self.attempts.withLock { $0 }
    }

    /// The attempts at `channelID`'s token, in order.
    func history(of channelID: UUID) -> [Attempt] {
        self.attempts.withLock { $0[channelID.lowercaseString] ?? [] }
    }

    /// Every channel whose last attempt was not accepted, with its attempts in order.
    func notAccepted() -> [String: [Attempt]] {
        self.histories().filter { !($0.value.last?.wasAccepted ?? false) }
    }

    /// ``notAccepted()`` one attempt a line, for an expectation's message.
    var notAcceptedHistory: String {
        self.notAccepted().sorted { $0.key < $1.key }
            .map { channel, attempts in "channel \(channel):\n" + attempts.map { "  \($0)" }.joined(separator: "\n") }
            .joined(separator: "\n")
    }

    /// The parts the workers claimed, and the leases they renewed or lost, in order.
    func leaseHistory() -> [Lease] {
        self.leases.withLock { $0 }
    }

    private func record(_ event: Lease.Event, _ metadata: Logger.Metadata) {
        guard let pushID = metadata["push.id"].map({ "\($0)" }) else { return }
        self.leases.withLock { $0.append(Lease(event: event, pushID: pushID)) }
    }

    private func record(_ metadata: Logger.Metadata) {
        guard let channel = metadata["channel.id"].map({ "\($0)" }) else { return }
        self.attempts.withLock { $0[channel, default: []].append(Attempt(metadata: metadata)) }
    }

    /// Keeps "apns attempt", claim and lease entries whatever the tests' level, and passes on what reaches that level.
    private struct Handler: LogHandler {
        let log: AttemptLog
        var handler: any LogHandler

        init(log: AttemptLog, forwardingTo handler: any LogHandler) {
            self.log = log
            self.handler = handler
        }

        func log(event: LogEvent) {
            let message = event.message.description
            if message == "apns attempt" {
                self.log.record(self.handler.metadata.merging(event.metadata ?? [:]) { $1 })
            } else if let lease = Lease.Event(rawValue: message) {
                self.log.record(lease, event.metadata ?? [:])
            }
            if event.level >= self.handler.logLevel { self.handler.log(event: event) }
        }

        var logLevel: Logger.Level {
            get { .trace }
            set { self.handler.logLevel = newValue }
        }

        var metadata: Logger.Metadata {
            get { self.handler.metadata }
            set { self.handler.metadata = newValue }
        }

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { self.handler[metadataKey: key] }
            set { self.handler[metadataKey: key] = newValue }
        }
    }
}
