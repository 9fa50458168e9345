import BlimpCore
import Synchronization

/// Gathers concurrent writes into multi-row statements: at most ``maximumFlushes`` flushes run at once, and requests
/// that arrive meanwhile wait and go together in the next one. When the database keeps up, a request is flushed
/// alone at once; under load, batches grow and each row costs a fraction of a statement and a commit.
///
/// A request's answer comes after its flush commits, so nothing is acknowledged before it is durable. A request never
/// fails for another's sake: when a batch of several fails, each of its requests is flushed again alone, so only the
/// one at fault gets the error (callers check what they can before they submit; this is for what only the database
/// finds). A request cancelled while it waits (its HTTP request timed out) leaves the queue unwritten; one already
/// being flushed waits for its flush.
final class Coalescer<Input: Sendable, Output: Sendable>: Sendable {
    /// Writes `inputs` and returns one output per input, in order.
    typealias Flush = @Sendable ([Input]) async throws -> [Output]

    let maximumFlushes: Int
    let maximumBatch: Int
    private let flush: Flush
    private let state = Mutex(State())

    private typealias Request = (input: Input, continuation: CheckedContinuation<Output, any Error>)

    private struct State {
        var waiting: [(id: UInt64, request: Request)] = []
        var flushing = 0
        var nextID: UInt64 = 0
    }

    init(maximumFlushes: Int = 2, maximumBatch: Int = 500, flush: @escaping Flush) {
        self.maximumFlushes = maximumFlushes
        self.maximumBatch = maximumBatch
        self.flush = flush
    }

    /// How many requests wait for a flush.
    var waiting: Int { self.state.withLock { $0.waiting.count } }

    /// Writes `input` with whatever else is waiting, and returns its output once committed.
    func submit(_ input: Input) async throws -> Output {
        let id = self.state.withLock { state in
            state.nextID += 1
            return state.nextID
        }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let startsFlushing = self.state.withLock { state in
                    state.waiting.append((id, (input, continuation)))
                    guard state.flushing < self.maximumFlushes else { return false }
                    state.flushing += 1
                    return true
                }
                if startsFlushing { Task { await self.drain() } }
            }
        } onCancel: {
            let cancelled = self.state.withLock { state -> Request? in
                guard let index = state.waiting.firstIndex(where: { $0.id == id }) else { return nil }
                return state.waiting.remove(at: index).request
            }
            cancelled?.continuation.resume(throwing: CancellationError())
        }
    }

    /// Flushes batches until nothing waits.
    private func drain() async {
        while true {
            let batch = self.state.withLock { state in
                let count = min(state.waiting.count, self.maximumBatch)
                if count == 0 { state.flushing -= 1 }
                let batch = state.waiting.prefix(count).map(\.request)
                state.waiting.removeFirst(count)
                return batch
            }
            if batch.isEmpty { return }
            do {
                let outputs = try await self.guardedFlush(batch.map(\.input))
                precondition(outputs.count == batch.count, "a flush returns one output per input")
                for (request, output) in zip(batch, outputs) { request.continuation.resume(returning: output) }
            } catch where batch.count > 1 {
                for request in batch { await self.flushAlone(request) }
            } catch {
                for request in batch { request.continuation.resume(throwing: error) }
            }
        }
    }

    /// How long a flush may take before it is given up (see ``withAbandoningTimeout(_:_:)``). Shorter than
    /// ``StoreError/deadline``: every request waiting behind a stuck flush waits with it. A flush takes milliseconds.
    static var flushDeadline: Duration { .seconds(10) }

    /// A flush within ``flushDeadline``: one stuck on a closed connection must not stop the queue for long.
    private func guardedFlush(_ inputs: [Input]) async throws -> [Output] {
        try await withAbandoningTimeout(Self.flushDeadline) { try await self.flush(inputs) }
    }

    private func flushAlone(_ request: Request) async {
        do {
            let outputs = try await self.guardedFlush([request.input])
            precondition(outputs.count == 1, "a flush returns one output per input")
            request.continuation.resume(returning: outputs[0])
        } catch {
            request.continuation.resume(throwing: error)
        }
    }
}
