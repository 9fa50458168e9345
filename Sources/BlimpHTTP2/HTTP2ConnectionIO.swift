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

extension ByteBuffer {
    /// The frames gathered so far, to write, leaving a fresh buffer for the next ones; nil when there are none.
    ///
    /// Handlers take their frames out before writing them, rather than writing them in place: the write can re-enter
    /// the handler (the TLS handler may pass on data it decrypted meanwhile), which then gathers new frames.
    package mutating func takeFrames(allocator: ByteBufferAllocator) -> ByteBuffer? {
        guard self.readableBytes > 0 else { return nil }
        let frames = self
        self = allocator.buffer(capacity: 16_384)
        return frames
    }
}

extension ChannelHandlerContext {
    /// Writes and flushes `frames` (one TLS record, one system call), if there are any.
    package func writeAndFlushFrames(_ frames: ByteBuffer?) {
        guard let frames else { return }
        self.writeAndFlush(NIOAny(frames), promise: nil)
    }
}
