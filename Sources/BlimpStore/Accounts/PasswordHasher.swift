import BlimpCore
import NIOPosix

/// Password hashing off the event loops and Swift's cooperative pool: each hash (tens of milliseconds of CPU, 32 MiB)
/// runs on NIO's shared blocking thread pool, so that sign-ins never stall requests.
public enum PasswordHasher {
    /// A hash of `password` under the current parameters.
    public static func hash(_ password: String) async -> PasswordHash {
        await Self.offLoop { PasswordHash(password: password) }
    }

    /// Whether `password` matches `stored`. With no stored hash (an unknown email, or an unreadable one), a dummy hash
    /// is checked instead, so that the answer takes as long as for a real account, and is `false`.
    public static func verify(_ password: String, against stored: PasswordHash?) async -> Bool {
        // The dummy is made on first use, off the cooperative pool too: its hash would stall the callers waiting on it.
        let matches = await Self.offLoop { (stored ?? Self.dummy).verify(password) }
        return matches && stored != nil
    }

    /// A hash no password is checked against for real.
    private static let dummy = PasswordHash(password: RandomToken.make())

    private static func offLoop<T: Sendable>(_ work: @escaping @Sendable () -> T) async -> T {
        do { return try await NIOThreadPool.singleton.runIfActive(work) } catch {
            // The singleton pool is never shut down; were it, hash here rather than fail the sign-in.
            return work()
        }
    }
}
