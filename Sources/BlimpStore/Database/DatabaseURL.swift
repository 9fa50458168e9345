import BlimpCore
import Foundation
import NIOSSL
import PostgresNIO

/// A PostgreSQL connection URL, as in `DATABASE_URL`: `postgres://user[:password]@host[:port]/database[?sslmode=…]`.
///
/// `sslmode` follows libpq: `disable` (the default), `prefer` and `require` (encrypted, not verified), `verify-full`
/// (encrypted, certificate and host name verified against the system's trust roots). `pooler=transaction` says the
/// URL reaches PostgreSQL through a connection pooler in transaction mode, such as PgBouncer's (``pooled``).
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
    /// Whether the URL goes through a pooler in transaction mode, which hands each transaction whichever server
    /// connection is free: then no startup parameter is sent (PgBouncer refuses them, or drops them when told to
    /// ignore them), statements are not prepared by name, and what needs a session of its own (LISTEN, migrations'
    /// advisory lock) must connect to PostgreSQL directly.
    public let pooled: Bool

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
        var pooled = false
        for item in components.queryItems ?? [] {
            if item.name == "sslmode", let mode = item.value.flatMap(TLSMode.init(rawValue:)) {
                tlsMode = mode
            } else if item.name == "pooler", item.value == "transaction" {
                pooled = true
            } else {
                throw .invalidURL("the query options are sslmode=disable|prefer|require|verify-full and pooler=transaction")
            }
        }
        self.host = host
        self.port = components.port ?? 5432
        self.username = components.user?.removingPercentEncoding ?? user
        self.password = components.password?.removingPercentEncoding
        self.database = database.removingPercentEncoding ?? database
        self.tlsMode = tlsMode
        self.pooled = pooled
    }

    /// The URL without its password, safe to log.
    public var description: String {
        "postgres://\(self.username)@\(self.host):\(self.port)/\(self.database)" + (self.pooled ? "?pooler=transaction" : "")
    }

    /// Settings for a connection pool; with `statementTimeout`, PostgreSQL cancels any statement of its connections
    /// that runs longer (`statement_timeout`, sent when each connection starts; `.zero`: never, whatever the role's
    /// default). JIT compilation is off: Blimp's statements are short, and compiling one (PostgreSQL does once a
    /// plan's estimated cost passes 100,000, as a count over a popular name's activities does) took a quarter of the
    /// console's preview.
    ///
    /// Through a transaction pooler (``pooled``) neither is sent: both must be the role's defaults there
    /// (``PooledSessionSettings``).
    public func clientConfiguration(statementTimeout: Duration? = nil) -> PostgresClient.Configuration {
        let tls: PostgresClient.Configuration.TLS =
            switch self.tlsConfiguration {
            case nil: .disable
            case (let configuration, required: false)?: .prefer(configuration)
            case (let configuration, required: true)?: .require(configuration)
            }
        var configuration = PostgresClient.Configuration(
            host: self.host, port: self.port, username: self.username, password: self.password, database: self.database, tls: tls)
        configuration.options.additionalStartupParameters = self.startupParameters(statementTimeout: statementTimeout)
        return configuration
    }

    /// Settings for a single connection, with the startup parameters a pool's connections send (so that a pooler
    /// that refuses them is found out by ``checkReachable(logger:)``).
    public func connectionConfiguration() throws -> PostgresConnection.Configuration {
        let tls: PostgresConnection.Configuration.TLS =
            switch self.tlsConfiguration {
            case nil: .disable
            case (let configuration, required: false)?: .prefer(try NIOSSLContext(configuration: configuration))
            case (let configuration, required: true)?: .require(try NIOSSLContext(configuration: configuration))
            }
        var configuration = PostgresConnection.Configuration(
            host: self.host, port: self.port, username: self.username, password: self.password, database: self.database, tls: tls)
        configuration.options.additionalStartupParameters = self.startupParameters(statementTimeout: nil)
        return configuration
    }

    /// `jit=off`, and `statement_timeout` in milliseconds when given; none through a transaction pooler.
    func startupParameters(statementTimeout: Duration?) -> [(String, String)] {
        guard !self.pooled else { return [] }
        guard let statementTimeout else { return [("jit", "off")] }
        return [("jit", "off"), ("statement_timeout", "\(statementTimeout.wholeMilliseconds)")]
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
