import BlimpCore
import BlimpHTTP2
import BlimpTestSupport
import NIOCore
import NIOHPACK
import NIOPosix
import NIOSSL
import Testing

/// The simulator's HTTP/2 against what no well-behaved client sends, over a raw TLS connection.
@Suite struct SimulatorHTTP2Tests {
    /// A malformed header block is a stream error (RST_STREAM `PROTOCOL_ERROR`); a stream beyond the limit of 1 that
    /// holds until a valid provider token is refused (RST_STREAM `REFUSED_STREAM`); the connection goes on.
    @Test func malformedAndExcessStreamsAreResetAndTheConnectionGoesOn() async throws {
        try await SimulatorHarness.with { harness in
            var connection = try await RawConnection.open(port: harness.port, caFile: harness.caFile)
            let request: [(String, String)] = [
                (":method", "POST"), (":scheme", "https"), (":authority", "127.0.0.1"),
                (":path", "/3/device/" + String(repeating: "ab", count: 32)),
            ]
            var bytes = ByteBuffer()
            bytes.writeHTTP2Preface()
            bytes.writeHTTP2Settings([])
            try connection.writeHeaders(request + [("APNs-Topic", "upper-case")], streamID: 1, endStream: true, into: &bytes)
            try connection.writeHeaders(request, streamID: 3, endStream: false, into: &bytes)
            try connection.writeHeaders(request, streamID: 5, endStream: true, into: &bytes)
            bytes.writeHTTP2FrameHeader(length: 2, type: .data, flags: .endStream, streamID: 3)
            bytes.writeString("{}")
            try await connection.channel.writeAndFlush(bytes)

            let seen = try await withCancellingTimeout(.seconds(30)) { [connection] in try await connection.frames(until: 3) }
            #expect(seen.resets[1] == HTTP2Wire.ErrorCode.protocolError.rawValue)
            #expect(seen.resets[5] == HTTP2Wire.ErrorCode.refusedStream.rawValue)
            #expect(seen.answered == [3])  // 403 MissingProviderToken, answered on the same connection
            try await connection.channel.close()
        }
    }
}

/// A TLS connection that writes raw HTTP/2 and reads frames with Blimp's frame reader.
private struct RawConnection {
    let channel: any Channel
    let frames: AsyncStream<HTTP2FrameReader.Frame>
    var encoder = HPACKEncoder(allocator: ByteBufferAllocator(), useHuffmanEncoding: false)

    static func open(port: Int, caFile: String) async throws -> RawConnection {
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.applicationProtocols = ["h2"]
        tls.trustRoots = .file(caFile)
        let context = try NIOSSLContext(configuration: tls)
        let (frames, continuation) = AsyncStream.makeStream(of: HTTP2FrameReader.Frame.self)
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(NIOSSLClientHandler(context: context, serverHostname: nil))
                    try channel.pipeline.syncOperations.addHandler(FrameCollector(continuation))
                }
            }
            .connect(host: "127.0.0.1", port: port)
            .get()
        return RawConnection(channel: channel, frames: frames)
    }

    mutating func writeHeaders(_ fields: [(String, String)], streamID: UInt32, endStream: Bool, into bytes: inout ByteBuffer) throws {
        var block = ByteBuffer()
        try self.encoder.encode(headers: HPACKHeaders(fields), to: &block)
        bytes.writeHTTP2FrameHeader(length: block.readableBytes, type: .headers, flags: endStream ? [.endHeaders, .endStream] : .endHeaders, streamID: streamID)
        bytes.writeBuffer(&block)
    }

    /// Reads frames until `count` streams have been reset or answered: the reset codes by stream, and the answered streams.
    func frames(until count: Int) async throws -> (resets: [UInt32: UInt32], answered: [UInt32]) {
        var resets: [UInt32: UInt32] = [:]
        var answered: [UInt32] = []
        for await frame in self.frames {
            switch frame {
            case .rstStream(let streamID, let code): resets[streamID] = code
            case .headers(let streamID, _, _): answered.append(streamID)
            default: break
            }
            if resets.count + answered.count >= count { break }
        }
        return (resets, answered)
    }
}

private final class FrameCollector: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    private var reader = HTTP2FrameReader(expectingPreface: false)
    private let continuation: AsyncStream<HTTP2FrameReader.Frame>.Continuation

    init(_ continuation: AsyncStream<HTTP2FrameReader.Frame>.Continuation) {
        self.continuation = continuation
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        self.reader.append(self.unwrapInboundIn(data))
        while let frame = try? self.reader.next() { self.continuation.yield(frame) }
    }

    func channelInactive(context: ChannelHandlerContext) {
        self.continuation.finish()
    }
}

/// RFC 9113's limits on what a peer may send, enforced by the frame reader and the flow-control windows that the
/// simulator and the APNs client share: each breach ends the connection with a GOAWAY naming the error.
@Suite struct SimulatorConnectionErrorTests {
    static func goAway(after frames: (inout ByteBuffer) -> Void) async throws -> UInt32? {
        try await SimulatorHarness.with { harness in
            let connection = try await RawConnection.open(port: harness.port, caFile: harness.caFile)
            var bytes = ByteBuffer()
            bytes.writeHTTP2Preface()
            bytes.writeHTTP2Settings([])
            frames(&bytes)
            try await connection.channel.writeAndFlush(bytes)
            let code = try await withCancellingTimeout(.seconds(30)) { [connection] () async -> UInt32? in
                for await frame in connection.frames {
                    if case .goAway(_, let errorCode) = frame { return errorCode }
                }
                return nil
            }
            try? await connection.channel.close()
            return code
        }
    }

    @Test func aZeroWindowIncrementIsAProtocolError() async throws {
        let code = try await Self.goAway { bytes in
            bytes.writeHTTP2WindowUpdate(streamID: 0, increment: 0)
        }
        #expect(code == HTTP2Wire.ErrorCode.protocolError.rawValue)
    }

    @Test func aWindowPastTwoToTheThirtyOneIsAFlowControlError() async throws {
        let code = try await Self.goAway { bytes in
            bytes.writeHTTP2WindowUpdate(streamID: 0, increment: HTTP2Wire.maximumWindow)
        }
        #expect(code == HTTP2Wire.ErrorCode.flowControlError.rawValue)
    }

    /// A header block that never ends (CONTINUATION after CONTINUATION) is cut off once it passes the bound, instead
    /// of growing without limit.
    @Test func anEndlessHeaderBlockIsCutOff() async throws {
        let code = try await Self.goAway { bytes in
            bytes.writeHTTP2FrameHeader(length: 0, type: .headers, streamID: 1)
            let chunk = [UInt8](repeating: 0x40, count: 16_000)
            for _ in 0..<5 {
                bytes.writeHTTP2FrameHeader(length: chunk.count, type: .continuation, streamID: 1)
                bytes.writeBytes(chunk)
            }
        }
        #expect(code == HTTP2Wire.ErrorCode.enhanceYourCalm.rawValue)
    }
}
