import NIOCore
import NIOSSL
import PostgresNIO

/// A database problem, described in one line without secrets.
public enum DatabaseError: Error, CustomStringConvertible {
    /// `DATABASE_URL` is not set.
    case notConfigured
    /// `DATABASE_URL` is malformed; the reason never quotes the URL, which may hold a password.
    case invalidURL(String)
    /// The server could not be reached or refused the connection.
    case unreachable(DatabaseURL, reason: String)
    /// The schema could not be applied.
    case migrationFailed(reason: String)

    public var description: String {
        switch self {
        case .notConfigured:
            "DATABASE_URL is not set (e.g. DATABASE_URL=postgres://blimp@127.0.0.1:5432/blimp)"
        case .invalidURL(let reason):
            "DATABASE_URL is not a valid PostgreSQL URL: \(reason)"
        case .unreachable(let url, let reason):
            "cannot connect to the database \(url): \(reason)"
        case .migrationFailed(let reason):
            "the schema could not be applied: \(reason)"
        }
    }

    /// BoringSSL's reason for a certificate no trusted CA signed, as NIOSSL's errors describe it (lower-cased).
    private static let untrustedCertificate = "certificate_verify_failed"

    /// The short, secret-free reason behind a postgres-nio or socket error.
    static func reason(for error: any Error) -> String {
        if let error = error as? PSQLError {
            if let message = error.serverInfo?[.message] {
                // PgBouncer's answer to the startup parameters Blimp sends PostgreSQL itself.
                guard message.hasPrefix("unsupported startup parameter") else { return message }
                return message + " (a connection pooler? add ?pooler=transaction to the URL)"
            }
            if let underlying = error.underlying { return Self.reason(for: underlying) }
            switch error.code {
            case .sslUnsupported: return "the server does not support TLS"
            case .serverClosedConnection, .clientClosedConnection: return "the connection was closed"
            default: return "\(error.code)"
            }
        }
        if let error = error as? NIOSSLError, "\(error)".lowercased().contains(Self.untrustedCertificate) {
            return "the server's TLS certificate is not from a trusted CA (CERTIFICATE_VERIFY_FAILED; sslrootcert names the CA file to trust)"
        }
        if let error = error as? NIOSSLExtraError, error == .failedToValidateHostname {
            return "the server's TLS certificate is not for this host name (sslmode=verify-full checks it; verify-ca does not)"
        }
        if let error = error as? NIOConnectionError, let first = error.connectionErrors.first {
            return Self.reason(for: first.error)
        }
        if let error = error as? IOError { return error.errnoCode == 111 ? "connection refused" : "\(error)" }
        if error is ChannelError { return "connection timed out" }
        return "\(error)"
    }
}
