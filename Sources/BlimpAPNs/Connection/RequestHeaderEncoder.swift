import BlimpHTTP2
import NIOCore

/// Encodes the header blocks of APNs requests with HPACK (RFC 7541), doing as little per request as it can.
///
/// The headers that repeat on a connection (authority, provider token, push type, topic, priority, content type) are
/// added to the dynamic table once and then sent as one or two bytes each; the ones that change every request
/// (`:path`, `apns-id`, expiration, collapse id) are sent as plain literals that are never indexed. Strings are not
/// Huffman-coded.
struct RequestHeaderEncoder {
    private struct Entry {
        var name: String
        var value: String
        /// RFC 7541 §4.1: name and value lengths plus 32.
        var size: Int { self.name.utf8.count + self.value.utf8.count + 32 }
    }

    /// Oldest first; the newest entry has index 62.
    private var table = CircularBuffer<Entry>()
    private var tableSize = 0
    private var maxTableSize = RequestHeaderEncoder.defaultTableSize
    private var pendingSizeUpdate = false

    /// The table size both sides start with, and the most this encoder uses.
    static let defaultTableSize = 4096

    /// Follows the server's SETTINGS_HEADER_TABLE_SIZE: the next header block announces the new size.
    mutating func setPeerTableSize(_ size: Int) {
        let size = min(size, Self.defaultTableSize)
        guard size != self.maxTableSize else { return }
        self.maxTableSize = size
        self.evict(toFit: 0)
        self.pendingSizeUpdate = true
    }

    /// Appends the header block of `request` to `buffer`.
    mutating func encode(
        _ request: APNsRequest,
        authority: String,
        authorization: String,
        apnsID: String,
        into buffer: inout ByteBuffer
    ) {
        if self.pendingSizeUpdate {
            buffer.writeHPACKInteger(self.maxTableSize, prefix: 5, flags: 0x20)
            self.pendingSizeUpdate = false
        }
        buffer.writeInteger(UInt8(0x83))  // :method: POST, static index 3
        buffer.writeInteger(UInt8(0x87))  // :scheme: https, static index 7
        self.writeRepeating(name: ":authority", staticIndex: 1, value: authority, into: &buffer)
        // The path holds the device token: never indexed (static name index 4), as the token changes every request.
        buffer.writeHPACKInteger(4, prefix: 4, flags: 0x10)
        buffer.writeHPACKInteger(Self.pathPrefix.utf8.count + request.deviceToken.hex.utf8.count, prefix: 7, flags: 0)
        buffer.writeString(Self.pathPrefix)
        buffer.writeString(request.deviceToken.hex)
        self.writeRepeating(name: "authorization", staticIndex: 23, value: authorization, into: &buffer)
        self.writeRepeating(name: "apns-push-type", value: request.pushType.rawValue, into: &buffer)
        self.writeRepeating(name: "apns-topic", value: request.topic, into: &buffer)
        self.writeRepeating(name: "apns-priority", value: String(request.priority.rawValue), into: &buffer)
        buffer.writeHPACKLiteral(name: "apns-id", value: apnsID)
        if let expiration = request.expiration {
            buffer.writeHPACKLiteral(name: "apns-expiration", value: String(expiration))
        }
        if let collapseID = request.collapseID {
            buffer.writeHPACKLiteral(name: "apns-collapse-id", value: collapseID)
        }
        self.writeRepeating(name: "content-type", staticIndex: 31, value: "application/json", into: &buffer)
    }

    private static let pathPrefix = "/3/device/"

    /// A header that repeats on the connection: indexed when the table has it, else added to the table.
    private mutating func writeRepeating(name: String, staticIndex: Int = 0, value: String, into buffer: inout ByteBuffer) {
        if let position = self.table.firstIndex(where: { $0.value == value && $0.name == name }) {
            let age = self.table.distance(from: position, to: self.table.endIndex) - 1
            buffer.writeHPACKInteger(62 + age, prefix: 7, flags: 0x80)
            return
        }
        let entry = Entry(name: name, value: value)
        guard entry.size <= self.maxTableSize else {
            buffer.writeHPACKLiteral(name: name, staticIndex: staticIndex, value: value)
            return
        }
        // Literal with incremental indexing (RFC 7541 §6.2.1).
        buffer.writeHPACKInteger(staticIndex, prefix: 6, flags: 0x40)
        if staticIndex == 0 { buffer.writeHPACKString(name) }
        buffer.writeHPACKString(value)
        self.evict(toFit: entry.size)
        self.table.append(entry)
        self.tableSize += entry.size
    }

    /// Drops the oldest entries until `size` more bytes fit.
    private mutating func evict(toFit size: Int) {
        while self.tableSize + size > self.maxTableSize, let oldest = self.table.popFirst() {
            self.tableSize -= oldest.size
        }
    }
}
