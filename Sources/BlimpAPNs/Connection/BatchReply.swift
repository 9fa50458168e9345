/// Where the outcomes of a batch of requests handed to one connection go: gathered on the connection's event loop,
/// in the batch's order, and handed back in one piece when the last arrives.
final class BatchReply {
    private var outcomes: [StreamOutcome]
    private var remaining: Int
    private let continuation: UnsafeContinuation<[StreamOutcome], Never>

    /// One request's place in a batch: where its outcome goes.
    struct Slot {
        let batch: BatchReply
        let index: Int

        func resolve(with outcome: StreamOutcome) {
            self.batch.resolve(self.index, with: outcome)
        }
    }

    init(count: Int, continuation: UnsafeContinuation<[StreamOutcome], Never>) {
        self.outcomes = Array(repeating: .notProcessed, count: count)
        self.remaining = count
        self.continuation = continuation
        if count == 0 { continuation.resume(returning: []) }
    }

    /// The outcome of the batch's request number `index`.
    func resolve(_ index: Int, with outcome: StreamOutcome) {
        self.outcomes[index] = outcome
        self.remaining -= 1
        if self.remaining == 0 { self.continuation.resume(returning: self.outcomes) }
    }
}
