import AsyncHTTPClient
import BlimpCore
import Foundation
import NIOCore
import NIOHTTP1
import NIOSSL

/// A client of a running Blimp API for the CLI's one-off commands (`blimp push`): HTTP or HTTPS (the system's trust
/// roots, plus a CA file for a private one), with a timeout on every request. The load generators keep their lean
/// hand-written HTTP/1 client.
struct APIClient {
    let base: String
    let headers: HTTPHeaders
    let timeout: Duration
    private let client: HTTPClient

    /// Runs `body` with a client of the API at `url`, shut down afterwards.
    static func with<T>(
        url: String, headers: [(String, String)], timeout: Duration, caFile: String?, _ body: (APIClient) async throws -> T
    ) async throws -> T {
        guard let components = URLComponents(string: url), ["http", "https"].contains(components.scheme), components.host != nil,
            components.path.isEmpty || components.path == "/"
        else {
            throw CLIError("--url must be an http:// or https:// URL with no path (got \(url))")
        }
        var tls = TLSConfiguration.makeClientConfiguration()
        if let caFile {
            guard FileManager.default.isReadableFile(atPath: caFile) else { throw CLIError("cannot read the CA file \(caFile)") }
            tls.additionalTrustRoots = [.file(caFile)]
        }
        var configuration = HTTPClient.Configuration(tlsConfiguration: tls)
        configuration.timeout = .init(connect: .seconds(10))
        // One attempt: a refused connection or an untrusted certificate is reported at once, not retried until the
        // connect timeout.
        configuration.connectionPool.retryConnectionEstablishment = false
        let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        let api = APIClient(
            base: url.hasSuffix("/") ? String(url.dropLast()) : url, headers: HTTPHeaders(headers), timeout: timeout, client: client)
        do {
            let result = try await body(api)
            try await client.shutdown()
            return result
        } catch {
            try? await client.shutdown()
            throw error
        }
    }

    /// The status and body (at most 10 MiB) of `method path`, or a one-line error naming what went wrong.
    func send(_ method: HTTPMethod, _ path: String, body: String? = nil) async throws -> (status: HTTPResponseStatus, body: ByteBuffer) {
        var request = HTTPClientRequest(url: self.base + path)
        request.method = method
        request.headers = self.headers
        if let body { request.body = .bytes(ByteBuffer(string: body)) }
        do {
            let response = try await self.client.execute(request, timeout: TimeAmount(self.timeout))
            return (response.status, try await response.body.collect(upTo: 10 * 1024 * 1024))
        } catch let error as HTTPClientError where error == .deadlineExceeded {
            throw CLIError("\(method) \(self.base)\(path) timed out after \(self.timeout.components.seconds) s")
        } catch let error as HTTPClientError {
            throw CLIError("\(method) \(self.base)\(path) failed: \(error)")
        } catch let error as NIOSSLError {
            throw CLIError("\(method) \(self.base)\(path) failed: TLS: \(error)")
        }
    }
}
