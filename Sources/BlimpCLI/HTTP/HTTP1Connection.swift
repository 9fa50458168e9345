import NIOCore
import NIOHTTP1
import NIOPosix

/// One keep-alive HTTP/1.1 connection that sends a request and waits for its answer, then the next: the lean client
/// `blimp simulate-devices` drives the API with (so that the load generator is not what gets measured) and
/// `blimp push` sends with. A request goes out as one buffer of bytes, and ``HTTP1ClientHandler`` reads its answer
/// (framed by `Content-Length`, as Blimp's API frames every answer) on the event loop; the caller waits once per
/// request.
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
                channel.eventLoop.makeCompletedFuture { try channel.pipeline.syncOperations.addHandler(HTTP1ClientHandler()) }
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
        var request = self.channel.allocator.buffer(capacity: 512 + (body?.readableBytes ?? 0))
        request.writeString("\(method.rawValue) \(path) HTTP/1.1\r\nHost: \(self.host)\r\n")
        for (name, value) in headers {
            request.writeString(name)
            request.writeStaticString(": ")
            request.writeString(value)
            request.writeStaticString("\r\n")
        }
        request.writeString("Content-Length: \(body?.readableBytes ?? 0)\r\n\r\n")
        if var body { request.writeBuffer(&body) }
        let handler = self.handler
        return try await withCheckedThrowingContinuation { [request] continuation in
            self.channel.eventLoop.execute { handler.value.send(request, continuation: continuation) }
        }
    }
}

/// Writes one request at a time and reads its answer, on the channel's event loop.
final class HTTP1ClientHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer
    typealias Answer = (status: HTTPResponseStatus, body: ByteBuffer)

    private var context: ChannelHandlerContext?
    private var waiting: CheckedContinuation<Answer, any Error>?
    private var received = ByteBuffer()

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
    }

    func send(_ request: ByteBuffer, continuation: CheckedContinuation<Answer, any Error>) {
        guard let context = self.context, context.channel.isActive, self.waiting == nil else {
            continuation.resume(throwing: ConnectionClosed())
            return
        }
        self.waiting = continuation
        context.writeAndFlush(self.wrapOutboundOut(request), promise: nil)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var bytes = self.unwrapInboundIn(data)
        self.received.writeBuffer(&bytes)
        do {
            guard let answer = try HTTP1Response.read(from: &self.received) else { return }
            if self.received.readableBytes == 0 { self.received.clear() }
            let waiting = self.waiting
            self.waiting = nil
            waiting?.resume(returning: answer)
        } catch {
            self.fail(error)
            context.close(promise: nil)
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

/// Reads HTTP/1.1 answers framed by `Content-Length` (or bodiless by status), as Blimp's API writes them.
enum HTTP1Response {
    /// The longest head read before the answer is given up as malformed.
    static let maximumHeadLength = 64 * 1024

    /// The first complete answer in `buffer`, consuming it; `nil` while more bytes are needed.
    static func read(from buffer: inout ByteBuffer) throws(MalformedResponse) -> (status: HTTPResponseStatus, body: ByteBuffer)? {
        let head = buffer.withUnsafeReadableBytes { bytes in Self.head(bytes) }
        guard let head else {
            guard buffer.readableBytes <= Self.maximumHeadLength else { throw MalformedResponse("the head is too long") }
            return nil
        }
        let (status, contentLength, headLength) = try head.get()
        let bodiless = (100..<200).contains(status) || status == 204 || status == 304
        guard let length = contentLength ?? (bodiless ? 0 : nil) else {
            throw MalformedResponse("the answer has no Content-Length")
        }
        guard buffer.readableBytes >= headLength + length else { return nil }
        buffer.moveReaderIndex(forwardBy: headLength)
        return (HTTPResponseStatus(statusCode: status), buffer.readSlice(length: length)!)
    }

    /// The status, `Content-Length` and length of the head at the start of `bytes`; `nil` until its blank line.
    private static func head(
        _ bytes: UnsafeRawBufferPointer
    ) -> Result<(status: Int, contentLength: Int?, length: Int), MalformedResponse>? {
        var lineStart = 0
        var status: Int?
        var contentLength: Int?
        var index = 0
        while index + 1 < bytes.count {
            guard bytes[index] == UInt8(ascii: "\r"), bytes[index + 1] == UInt8(ascii: "\n") else {
                index += 1
                continue
            }
            let line = UnsafeRawBufferPointer(rebasing: bytes[lineStart..<index])
            if line.isEmpty {
                guard let status else { return .failure(MalformedResponse("the answer has no status line")) }
                return .success((status, contentLength, index + 2))
            }
            if status == nil {
                // `HTTP/1.1 200 OK`
                guard line.count >= 12, line.starts(with: "HTTP/1.".utf8), let code = Self.integer(line[9..<12]) else {
                    return .failure(MalformedResponse("the status line is \(String(decoding: line.prefix(80), as: UTF8.self))"))
                }
                status = code
            } else if let colon = line.firstIndex(of: UInt8(ascii: ":")) {
                let name = line[..<colon].lazy.map { $0 | 0x20 }  // ASCII lower case
                if name.elementsEqual("content-length".utf8) {
                    guard let value = Self.integer(line[(colon + 1)...].drop { $0 == UInt8(ascii: " ") }) else {
                        return .failure(MalformedResponse("Content-Length is not a number"))
                    }
                    contentLength = value
                } else if name.elementsEqual("transfer-encoding".utf8) {
                    return .failure(MalformedResponse("chunked answers are not read"))
                }
            }
            index += 2
            lineStart = index
        }
        return nil
    }

    /// Decimal digits as a number; `nil` when empty, not all digits, or absurdly long.
    private static func integer(_ digits: some Collection<UInt8>) -> Int? {
        guard !digits.isEmpty, digits.count <= 12 else { return nil }
        var value = 0
        for digit in digits {
            guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(digit) else { return nil }
            value = value * 10 + Int(digit - UInt8(ascii: "0"))
        }
        return value
    }

    struct MalformedResponse: Error, CustomStringConvertible {
        let reason: String
        init(_ reason: String) { self.reason = reason }
        var description: String { "the server's answer is not HTTP/1.1 as expected: \(self.reason)" }
    }
}

struct ConnectionClosed: Error, CustomStringConvertible {
    var description: String { "the server closed the connection" }
}
