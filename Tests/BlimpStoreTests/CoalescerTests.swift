import Synchronization
import Testing

@testable import BlimpStore

@Suite struct CoalescerTests {
    struct Refused: Error, Equatable { var input: Int }

    /// A batch that fails because of one member is flushed again member by member: only that member gets the error,
    /// and the others are written and answered.
    @Test func aFailedBatchIsRetriedOneByOneSoOnlyTheCulpritFails() async throws {
        let batches = Mutex<[[Int]]>([])
        let (gate, open) = AsyncStream<Void>.makeStream()
        // One flush at a time, so that requests arriving during the first flush wait and go together; the first holds
        // until they all wait.
        let coalescer = Coalescer<Int, Int>(maximumFlushes: 1) { inputs in
            let first = batches.withLock { batches in
                batches.append(inputs)
                return batches.count == 1
            }
            if first { for await _ in gate { break } }
            if let bad = inputs.first(where: { $0 < 0 }) { throw Refused(input: bad) }
            return inputs.map { $0 * 10 }
        }
        let results = await withTaskGroup(of: (Int, Result<Int, Refused>).self) { group in
            for input in [1, 2, -3, 4, 5] {
                group.addTask {
                    do {
                        return (input, .success(try await coalescer.submit(input)))
                    } catch {
                        return (input, .failure(error as! Refused))
                    }
                }
                if input == 1 { await Self.poll { batches.withLock { $0.count == 1 } } }
            }
            await Self.poll { coalescer.waiting == 4 }
            open.yield()
            return await group.reduce(into: [Int: Result<Int, Refused>]()) { $0[$1.0] = $1.1 }
        }
        #expect(results == [1: .success(10), 2: .success(20), -3: .failure(Refused(input: -3)), 4: .success(40), 5: .success(50)])
        let seen = batches.withLock { $0 }
        #expect(seen.contains { $0.count == 4 }, "the four that waited went together first: \(seen)")
        #expect(seen.filter { $0.count == 1 }.count == 5, "then one by one: \(seen)")
    }

    /// Waits until `condition` holds, for at most 30 s.
    private static func poll(_ condition: () -> Bool) async {
        for _ in 0..<3000 where !condition() { try? await Task.sleep(for: .milliseconds(10)) }
    }
}
