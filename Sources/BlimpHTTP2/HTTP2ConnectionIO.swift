import NIOCore

/// The connection's receive window as both sides keep it: received DATA is given back in WINDOW_UPDATEs of at least
/// 16 KiB, so many small bodies cost one frame (RFC 9113 §6.9).
package struct ConnectionReceiveWindow {
    private var unreplenished = 0

    package init() {}

    /// Counts `flowControlledLength` received bytes, writing a connection WINDOW_UPDATE to `frames` once enough gathered.
    package mutating func consume(_ flowControlledLength: Int, writingUpdateTo frames: inout ByteBuffer) {
        self.unreplenished += flowControlledLength
        guard self.unreplenished >= 16_384 else { return }
        frames.writeHTTP2WindowUpdate(streamID: 0, increment: self.unreplenished)
        self.unreplenished = 0
    }
}

extension ChannelHandlerContext {
    /// Writes and flushes the frames gathered in `frames` (one TLS record, one system call), leaving it empty.
    package func writeAndFlushFrames(_ frames: inout ByteBuffer) {
        guard frames.readableBytes > 0 else { return }
        let bytes = frames
        frames = self.channel.allocator.buffer(capacity: 16_384)
        self.writeAndFlush(NIOAny(bytes), promise: nil)
    }
}
