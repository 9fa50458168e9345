import BlimpSimulator
import Foundation

/// A private CA and a server certificate it signed for `localhost`, `127.0.0.1` and `::1` (the simulator's own,
/// `SimulatorTLS`), as PEM files: for servers that tests start with TLS, and clients told to trust that CA alone.
public struct TestCertificates: Sendable {
    /// The CA's certificate.
    public let authority: URL
    /// The server's certificate.
    public let certificate: URL
    /// The server's private key (mode 0600).
    public let key: URL

    /// Creates a new CA and server certificate in `folder`; each folder's CA is a different one.
    public init(in folder: URL) throws {
        guard let authority = try SimulatorTLS.loadOrCreate(in: folder.path).caFile else { throw TestCertificatesError() }
        self.authority = URL(fileURLWithPath: authority)
        self.certificate = folder.appendingPathComponent("server.pem")
        self.key = folder.appendingPathComponent("server-key.pem")
    }
}

/// The simulator created no CA of its own.
private struct TestCertificatesError: Error {}
