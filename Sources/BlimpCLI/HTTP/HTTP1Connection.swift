import NIOCore
import NIOHTTP1
import NIOPosix

/// One keep-alive HTTP/1.1 connection that sends a request and waits for its answer, then the next: the lean client
/// `blimp simulate-devices` drives the API with (so that the load generator is not what gets measured) and
/// `blimp push` sends with.
struct HTTP1Connection {
    private let outbound: NIOAsyncChannelOutboundWriter<HTTPClientRequestPart>
    private var inbound: NIOAsyncChannelInboundStream<HTTPClientResponsePart>.AsyncIterator
    private let host: String

    /// Connects to `host`:`port` and runs `body` with the connection, closing it afterwards.
    static func with<T: Sendable>(
        host: String,
        port: Int,
        _ body: (inout HTTP1Connection) async throws -> T
    ) async throws -> T {
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .channelOption(.socketOption(.tcp_nodelay), value: 1)
            .connect(host: host, port: port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHTTPClientHandlers()
                    return try NIOAsyncChannel<HTTPClientResponsePart, HTTPClientRequestPart>(wrappingChannelSynchronously: channel)
                }
            }
        return try await channel.executeThenClose { inbound, outbound in
            var connection = HTTP1Connection(outbound: outbound, inbound: inbound.makeAsyncIterator(), host: "\(host):\(port)")
            return try await body(&connection)
        }
    }

    /// Sends one request and returns the answer's status and body.
    mutating func send(
        _ method: HTTPMethod,
        _ path: String,
        headers: [(String, String)],
        body: ByteBuffer? = nil
    ) async throws -> (status: HTTPResponseStatus, body: ByteBuffer) {
        var head = HTTPRequestHead(version: .http1_1, method: method, uri: path)
        head.headers.add(name: "Host", value: self.host)
        head.headers.add(contentsOf: headers)
        head.headers.add(name: "Content-Length", value: "\(body?.readableBytes ?? 0)")
        var parts: [HTTPClientRequestPart] = [.head(head)]
        if let body { parts.append(.body(.byteBuffer(body))) }
        parts.append(.end(nil))
        try await self.outbound.write(contentsOf: parts)

        var status = HTTPResponseStatus.ok
        var answer = ByteBuffer()
        while let part = try await self.inbound.next() {
            switch part {
            case .head(let head): status = head.status
            case .body(var chunk): answer.writeBuffer(&chunk)
            case .end: return (status, answer)
            }
        }
        throw ConnectionClosed()
    }

    struct ConnectionClosed: Error, CustomStringConvertible {
        var description: String { "the server closed the connection" }
    }
}
