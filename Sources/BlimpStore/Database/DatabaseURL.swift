import Foundation
import NIOSSL
import PostgresNIO

/// A PostgreSQL connection URL, as in `DATABASE_URL`: `postgres://user[:password]@host[:port]/database[?sslmode=…]`.
///
/// `sslmode` follows libpq: `disable` (the default), `prefer` and `require` (encrypted, not verified), `verify-full`
/// (encrypted, certificate and host name verified against the system's trust roots).
public struct DatabaseURL: Sendable, CustomStringConvertible {
    public enum TLSMode: String, Sendable {
        case disable
        case prefer
        case require
        case verifyFull = "verify-full"
    }

    public let host: String
    public let port: Int
    public let username: String
    public let password: String?
    public let database: String
    public let tlsMode: TLSMode

    /// Parses `text`; the error never repeats the password.
    public init(_ text: String) throws(DatabaseError) {
        guard let components = URLComponents(string: text),
            components.scheme == "postgres" || components.scheme == "postgresql"
        else {
            throw .invalidURL("it must look like postgres://user@host:5432/database")
        }
        guard let host = components.host, !host.isEmpty else { throw .invalidURL("it names no host") }
        guard let user = components.user, !user.isEmpty else { throw .invalidURL("it names no user") }
        let database = String(components.path.dropFirst())
        guard !database.isEmpty, !database.contains("/") else { throw .invalidURL("it names no database") }
        var tlsMode = TLSMode.disable
        for item in components.queryItems ?? [] {
            guard item.name == "sslmode", let mode = item.value.flatMap(TLSMode.init(rawValue:)) else {
                throw .invalidURL("the only query option is sslmode=disable|prefer|require|verify-full")
            }
            tlsMode = mode
        }
        self.host = host
        self.port = components.port ?? 5432
        self.username = components.user?.removingPercentEncoding ?? user
        self.password = components.password?.removingPercentEncoding
        self.database = database.removingPercentEncoding ?? database
        self.tlsMode = tlsMode
    }

    /// The URL without its password, safe to log.
    public var description: String { "postgres://\(self.username)@\(self.host):\(self.port)/\(self.database)" }

    /// Settings for a connection pool; with `statementTimeout`, PostgreSQL cancels any statement of its connections
    /// that runs longer (`statement_timeout`, sent when each connection starts). JIT compilation is off: Blimp's
    /// statements are short, and compiling one (PostgreSQL does once a plan's estimated cost passes 100,000, as a
    /// count over a popular name's activities does) took a quarter of the console's preview.
    public func clientConfiguration(statementTimeout: Duration? = nil) -> PostgresClient.Configuration {
        let tls: PostgresClient.Configuration.TLS =
            switch self.tlsConfiguration {
            case nil: .disable
            case (let configuration, required: false)?: .prefer(configuration)
            case (let configuration, required: true)?: .require(configuration)
            }
        var configuration = PostgresClient.Configuration(
            host: self.host, port: self.port, username: self.username, password: self.password, database: self.database, tls: tls)
        configuration.options.additionalStartupParameters = [("jit", "off")]
        if let statementTimeout {
            let milliseconds = statementTimeout.components.seconds * 1000 + statementTimeout.components.attoseconds / 1_000_000_000_000_000
            configuration.options.additionalStartupParameters.append(("statement_timeout", "\(milliseconds)"))
        }
        return configuration
    }

    /// Settings for a single connection.
    public func connectionConfiguration() throws -> PostgresConnection.Configuration {
        let tls: PostgresConnection.Configuration.TLS =
            switch self.tlsConfiguration {
            case nil: .disable
            case (let configuration, required: false)?: .prefer(try NIOSSLContext(configuration: configuration))
            case (let configuration, required: true)?: .require(try NIOSSLContext(configuration: configuration))
            }
        return .init(host: self.host, port: self.port, username: self.username, password: self.password, database: self.database, tls: tls)
    }

    /// The TLS that `sslmode` asks for, and whether a server without TLS is refused; `nil` for plain text.
    private var tlsConfiguration: (TLSConfiguration, required: Bool)? {
        switch self.tlsMode {
        case .disable: nil
        case .prefer: (Self.unverifiedTLS, required: false)
        case .require: (Self.unverifiedTLS, required: true)
        case .verifyFull: (.makeClientConfiguration(), required: true)
        }
    }

    private static var unverifiedTLS: TLSConfiguration {
        var configuration = TLSConfiguration.makeClientConfiguration()
        configuration.certificateVerification = .none
        return configuration
    }
}
