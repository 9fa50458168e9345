import NIOCore
import NIOHTTP1
import NIOPosix

/// One keep-alive HTTP/1.1 connection that sends a request and waits for its answer, then the next: the lean client
/// `blimp simulate-devices` drives the API with (so that the load generator is not what gets measured) and
/// `blimp push` sends with. A request is written and its answer gathered on the event loop by
/// ``HTTP1ClientHandler``; the caller waits once per request.
struct HTTP1Connection {
    private let channel: any Channel
    private let handler: NIOLoopBound<HTTP1ClientHandler>
    private let host: String

    /// Connects to `host`:`port` and runs `body` with the connection, closing it afterwards.
    static func with<T: Sendable>(
        host: String,
        port: Int,
        _ body: (inout HTTP1Connection) async throws -> T
    ) async throws -> T {
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .channelOption(.socketOption(.tcp_nodelay), value: 1)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHTTPClientHandlers()
                    try channel.pipeline.syncOperations.addHandler(HTTP1ClientHandler())
                }
            }
            .connect(host: host, port: port)
            .get()
        let handler = try await channel.eventLoop.submit {
            NIOLoopBound(try channel.pipeline.syncOperations.handler(type: HTTP1ClientHandler.self), eventLoop: channel.eventLoop)
        }.get()
        var connection = HTTP1Connection(channel: channel, handler: handler, host: "\(host):\(port)")
        do {
            let result = try await body(&connection)
            try? await channel.close()
            return result
        } catch {
            try? await channel.close()
            throw error
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
        head.headers.add(name: "Content-Length", value: String(body?.readableBytes ?? 0))
        let handler = self.handler
        return try await withCheckedThrowingContinuation { continuation in
            self.channel.eventLoop.execute { handler.value.send(head, body: body, continuation: continuation) }
        }
    }
}

/// Writes one request at a time and gathers its answer, on the channel's event loop.
final class HTTP1ClientHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPClientResponsePart
    typealias OutboundOut = HTTPClientRequestPart
    typealias Answer = (status: HTTPResponseStatus, body: ByteBuffer)

    private var context: ChannelHandlerContext?
    private var waiting: CheckedContinuation<Answer, any Error>?
    private var status = HTTPResponseStatus.ok
    private var body = ByteBuffer()

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
    }

    func send(_ head: HTTPRequestHead, body: ByteBuffer?, continuation: CheckedContinuation<Answer, any Error>) {
        guard let context = self.context, context.channel.isActive, self.waiting == nil else {
            continuation.resume(throwing: ConnectionClosed())
            return
        }
        self.waiting = continuation
        self.body.clear()
        context.write(self.wrapOutboundOut(.head(head)), promise: nil)
        if let body { context.write(self.wrapOutboundOut(.body(.byteBuffer(body))), promise: nil) }
        context.writeAndFlush(self.wrapOutboundOut(.end(nil)), promise: nil)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch self.unwrapInboundIn(data) {
        case .head(let head):
            self.status = head.status
        case .body(var chunk):
            self.body.writeBuffer(&chunk)
        case .end:
            let waiting = self.waiting
            self.waiting = nil
            waiting?.resume(returning: (self.status, self.body))
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        self.fail(ConnectionClosed())
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        self.fail(error)
        context.close(promise: nil)
    }

    private func fail(_ error: any Error) {
        let waiting = self.waiting
        self.waiting = nil
        waiting?.resume(throwing: error)
    }
}

struct ConnectionClosed: Error, CustomStringConvertible {
    var description: String { "the server closed the connection" }
}
