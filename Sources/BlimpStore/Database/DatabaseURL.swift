import BlimpCore
import Foundation
import NIOSSL
import PostgresNIO

/// A PostgreSQL connection URL, as in `DATABASE_URL`: `postgres://user[:password]@host[:port]/database[?option=…&…]`.
///
/// As in libpq, the URL may name up to 16 hosts, `host1:port1,host2:port2`, tried in order for the server that
/// `target_session_attrs` asks for: `read-write` (the default: the first that takes writes, as `SHOW
/// transaction_read_only` answers), `primary` (the first not in recovery, as `pg_is_in_recovery()` answers) or `any`
/// (the first that answers). A primary and its standbys, in any order, so: Blimp finds whichever is the primary,
/// and again after a failover (``Database``). The default differs from libpq's `any` because Blimp writes.
/// See https://www.postgresql.org/docs/current/libpq-connect.html#LIBPQ-MULTIPLE-HOSTS
///
/// The options follow libpq's names. `sslmode`: `disable` (the default), `prefer` and `require` (encrypted, not
/// verified), `verify-ca` (encrypted, the certificate verified) and `verify-full` (the host name too). `sslrootcert`:
/// a PEM file of the CAs to verify against, read when the URL is parsed, instead of the system's trust roots; as in
/// libpq, with `require` it verifies as `verify-ca` does. `connect_timeout`: seconds to wait for a connection (1 to
/// 3600; 10 by default). `application_name`: the name the server shows in `pg_stat_activity`. `pooler=transaction`
/// says the URL reaches PostgreSQL through a connection pooler in transaction mode, such as PgBouncer's (``pooled``).
public struct DatabaseURL: Sendable, CustomStringConvertible {
    public enum TLSMode: String, Sendable, CaseIterable {
        case disable
        case prefer
        case require
        case verifyCA = "verify-ca"
        case verifyFull = "verify-full"
    }

    /// A server the URL names, by host name or address, and its port.
    public struct Endpoint: Sendable, Hashable, CustomStringConvertible {
        public let host: String
        public let port: Int

        public var description: String { self.host.contains(":") ? "[\(self.host)]:\(self.port)" : "\(self.host):\(self.port)" }
    }

    /// `target_session_attrs`: which of the URL's servers Blimp works with.
    public enum SessionTarget: String, Sendable, CaseIterable {
        case readWrite = "read-write"
        case primary
        case any
    }

    /// The servers, in the order they are tried; at least one, at most ``maximumHosts``.
    public let endpoints: [Endpoint]
    /// `target_session_attrs`: which of ``endpoints`` to work with.
    public let target: SessionTarget
    public let username: String
    public let password: String?
    public let database: String
    public let tlsMode: TLSMode
    /// `sslrootcert`: the CA certificates the server's must chain to, instead of the system's trust roots.
    public let rootCertificates: [NIOSSLCertificate]?
    /// `connect_timeout`: how long opening a connection may take.
    public let connectTimeout: Duration
    /// `application_name`: sent when each connection starts, shown in `pg_stat_activity`.
    public let applicationName: String?
    /// Whether the URL goes through a pooler in transaction mode, which hands each transaction whichever server
    /// connection is free: then no startup parameter is sent but `application_name` (PgBouncer refuses the others, or
    /// drops them when told to ignore them; it keeps that one for each client), statements are not prepared by name,
    /// and what needs a session of its own (LISTEN, migrations' advisory lock) must connect to PostgreSQL directly.
    public let pooled: Bool

    /// The query options the URL may carry, for error messages.
    static let options =
        "sslmode=disable|prefer|require|verify-ca|verify-full, sslrootcert=FILE, connect_timeout=SECONDS, application_name=NAME, target_session_attrs=read-write|primary|any and pooler=transaction"

    /// The most hosts a URL may name.
    public static let maximumHosts = 16

    /// Parses `text`, reading the `sslrootcert` file it names; the error never repeats the password.
    public init(_ text: String) throws(DatabaseError) {
        let (single, endpoints) = try Self.hosts(in: text)
        guard let components = URLComponents(string: single),
            components.scheme == "postgres" || components.scheme == "postgresql"
        else {
            throw .invalidURL("it must look like postgres://user@host:5432/database")
        }
        guard let user = components.user, !user.isEmpty else { throw .invalidURL("it names no user") }
        let database = String(components.path.dropFirst())
        guard !database.isEmpty, !database.contains("/") else { throw .invalidURL("it names no database") }
        var tlsMode = TLSMode.disable
        var rootCertificateFile: String?
        var connectTimeout = Duration.seconds(10)
        var applicationName: String?
        var pooled = false
        var target = SessionTarget.readWrite
        for item in components.queryItems ?? [] {
            switch (item.name, item.value ?? "") {
            case ("sslmode", let value):
                guard let mode = TLSMode(rawValue: value) else {
                    throw .invalidURL("sslmode must be one of \(TLSMode.allCases.map(\.rawValue).joined(separator: ", "))")
                }
                tlsMode = mode
            case ("sslrootcert", let path) where !path.isEmpty: rootCertificateFile = path
            case ("connect_timeout", let value): connectTimeout = try Self.connectTimeout(value)
            case ("application_name", let name): applicationName = try Self.applicationName(name)
            case ("pooler", "transaction"): pooled = true
            case ("target_session_attrs", let value):
                guard let chosen = SessionTarget(rawValue: value) else {
                    throw .invalidURL("target_session_attrs must be one of \(SessionTarget.allCases.map(\.rawValue).joined(separator: ", "))")
                }
                target = chosen
            default: throw .invalidURL("the query options are \(Self.options)")
            }
        }
        self.endpoints = endpoints
        self.target = target
        self.username = components.user?.removingPercentEncoding ?? user
        self.password = components.password?.removingPercentEncoding
        self.database = database.removingPercentEncoding ?? database
        self.tlsMode = tlsMode
        self.rootCertificates = try rootCertificateFile.map { path throws(DatabaseError) in try Self.certificates(in: path, for: tlsMode) }
        self.connectTimeout = connectTimeout
        self.applicationName = applicationName
        self.pooled = pooled
    }

    /// The URL's hosts and ports, and the URL with a single placeholder host in their place (which `URLComponents`
    /// parses; it takes no list). Hosts are names, IPv4 addresses or bracketed IPv6 addresses, each with its port or
    /// 5432.
    private static func hosts(in text: String) throws(DatabaseError) -> (String, [Endpoint]) {
        guard let schemeEnd = text.range(of: "://") else { throw .invalidURL("it must look like postgres://user@host:5432/database") }
        let rest = text[schemeEnd.upperBound...]
        let authority = rest.prefix { $0 != "/" && $0 != "?" }
        let list = authority.lastIndex(of: "@").map { authority[authority.index(after: $0)...] } ?? authority
        guard !list.isEmpty else { throw .invalidURL("it names no host") }
        let endpoints = try list.split(separator: ",", omittingEmptySubsequences: false).map { item throws(DatabaseError) in
            try Self.endpoint(String(item))
        }
        guard endpoints.count <= Self.maximumHosts else {
            throw .invalidURL("it names \(endpoints.count) hosts; at most \(Self.maximumHosts) are allowed")
        }
        return (text[..<list.startIndex] + "placeholder" + text[list.endIndex...], endpoints)
    }

    /// One `host[:port]` of the list.
    private static func endpoint(_ item: String) throws(DatabaseError) -> Endpoint {
        let host: Substring
        let port: Substring?
        if item.hasPrefix("["), let close = item.firstIndex(of: "]") {
            host = item[item.index(after: item.startIndex)..<close]
            let after = item[item.index(after: close)...]
            guard after.isEmpty || after.hasPrefix(":") else { throw .invalidURL("it must look like postgres://user@host:5432/database") }
            port = after.isEmpty ? nil : after.dropFirst()
        } else if let colon = item.lastIndex(of: ":") {
            (host, port) = (item[..<colon], item[item.index(after: colon)...])
        } else {
            (host, port) = (item[...], nil)
        }
        guard !host.isEmpty, !host.contains(where: { "[]/?#@ ".contains($0) }) else { throw .invalidURL("it names no host") }
        let number = port.map { Int($0) } ?? 5432
        guard let number, (1...65535).contains(number) else { throw .invalidURL("the port of \(host) must be from 1 to 65535") }
        return Endpoint(host: host.removingPercentEncoding ?? String(host), port: number)
    }

    /// `connect_timeout`'s whole seconds, 1 to 3600 (libpq's 0, wait for ever, is refused: a process should learn
    /// that its database is unreachable).
    private static func connectTimeout(_ value: String) throws(DatabaseError) -> Duration {
        guard let seconds = Int(value), (1...3600).contains(seconds) else {
            throw .invalidURL("connect_timeout must be whole seconds from 1 to 3600")
        }
        return .seconds(seconds)
    }

    /// `application_name` as PostgreSQL keeps it whole: printable ASCII, at most 63 bytes (it cuts longer names
    /// and turns other characters into `?`).
    private static func applicationName(_ name: String) throws(DatabaseError) -> String {
        guard !name.isEmpty, name.utf8.count <= 63, name.utf8.allSatisfy({ (0x20...0x7E).contains($0) }) else {
            throw .invalidURL("application_name must be 1 to 63 printable ASCII characters")
        }
        return name
    }

    /// The certificates of the `sslrootcert` file, which only a mode that verifies the server uses.
    private static func certificates(in path: String, for mode: TLSMode) throws(DatabaseError) -> [NIOSSLCertificate] {
        guard mode == .require || mode == .verifyCA || mode == .verifyFull else {
            throw .invalidURL("sslrootcert needs sslmode=verify-ca or verify-full (or require, which it then verifies as verify-ca)")
        }
        guard FileManager.default.isReadableFile(atPath: path) else { throw .invalidURL("sslrootcert: cannot read \(path)") }
        guard let certificates = try? NIOSSLCertificate.fromPEMFile(path), !certificates.isEmpty else {
            throw .invalidURL("sslrootcert: \(path) holds no PEM certificate")
        }
        return certificates
    }

    /// The URL without its password, safe to log.
    public var description: String {
        let options = [self.target == .readWrite ? nil : "target_session_attrs=\(self.target.rawValue)", self.pooled ? "pooler=transaction" : nil]
            .compactMap { $0 }
        return "postgres://\(self.username)@\(self.endpoints.map(\.description).joined(separator: ","))/\(self.database)"
            + (options.isEmpty ? "" : "?" + options.joined(separator: "&"))
    }

    /// Settings for a connection pool; with `statementTimeout`, PostgreSQL cancels any statement of its connections
    /// that runs longer (`statement_timeout`, sent when each connection starts; `.zero`: never, whatever the role's
    /// default). JIT compilation is off: Blimp's statements are short, and compiling one (PostgreSQL does once a
    /// plan's estimated cost passes 100,000, as a count over a popular name's activities does) took a quarter of the
    /// console's preview.
    ///
    /// Through a transaction pooler (``pooled``) neither is sent: both must be the role's defaults there
    /// (``PooledSessionSettings``).
    public func clientConfiguration(for endpoint: Endpoint, statementTimeout: Duration? = nil) -> PostgresClient.Configuration {
        let tls: PostgresClient.Configuration.TLS =
            switch self.tlsConfiguration {
            case nil: .disable
            case (let configuration, required: false)?: .prefer(configuration)
            case (let configuration, required: true)?: .require(configuration)
            }
        var configuration = PostgresClient.Configuration(
            host: endpoint.host, port: endpoint.port, username: self.username, password: self.password, database: self.database, tls: tls)
        configuration.options.connectTimeout = self.connectTimeout
        configuration.options.additionalStartupParameters = self.startupParameters(statementTimeout: statementTimeout)
        return configuration
    }

    /// Settings for a single connection to `endpoint`, with the startup parameters a pool's connections send (so that
    /// a pooler that refuses them is found out by ``checkReachable(logger:)``).
    public func connectionConfiguration(for endpoint: Endpoint) throws -> PostgresConnection.Configuration {
        let tls: PostgresConnection.Configuration.TLS =
            switch self.tlsConfiguration {
            case nil: .disable
            case (let configuration, required: false)?: .prefer(try NIOSSLContext(configuration: configuration))
            case (let configuration, required: true)?: .require(try NIOSSLContext(configuration: configuration))
            }
        var configuration = PostgresConnection.Configuration(
            host: endpoint.host, port: endpoint.port, username: self.username, password: self.password, database: self.database, tls: tls)
        configuration.options.connectTimeout = .milliseconds(self.connectTimeout.wholeMilliseconds)
        configuration.options.additionalStartupParameters = self.startupParameters(statementTimeout: nil)
        return configuration
    }

    /// `jit=off`, `statement_timeout` in milliseconds when given, and `application_name` when the URL names one;
    /// through a transaction pooler only `application_name`.
    func startupParameters(statementTimeout: Duration?) -> [(String, String)] {
        var parameters: [(String, String)] = []
        if !self.pooled {
            parameters.append(("jit", "off"))
            if let statementTimeout { parameters.append(("statement_timeout", "\(statementTimeout.wholeMilliseconds)")) }
        }
        if let applicationName = self.applicationName { parameters.append(("application_name", applicationName)) }
        return parameters
    }

    /// The TLS that `sslmode` asks for, and whether a server without TLS is refused; `nil` for plain text.
    private var tlsConfiguration: (TLSConfiguration, required: Bool)? {
        switch self.tlsMode {
        case .disable: nil
        case .prefer: (self.verifying(.none), required: false)
        case .require: (self.verifying(self.rootCertificates == nil ? .none : .noHostnameVerification), required: true)
        case .verifyCA: (self.verifying(.noHostnameVerification), required: true)
        case .verifyFull: (self.verifying(.fullVerification), required: true)
        }
    }

    /// A client configuration that verifies the server as `verification` says, against `sslrootcert`'s CAs when given.
    private func verifying(_ verification: CertificateVerification) -> TLSConfiguration {
        var configuration = TLSConfiguration.makeClientConfiguration()
        configuration.certificateVerification = verification
        if let rootCertificates = self.rootCertificates { configuration.trustRoots = .certificates(rootCertificates) }
        return configuration
    }
}
