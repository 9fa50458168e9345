import BlimpCore
import Foundation

/// A row that travels in a JSON array to `json_to_recordset`: it writes its columns as one object's members, keyed by
/// column name. Absent (`nil`) columns are left out, and the statement reads them as NULL.
protocol JSONRow {
    func write(to object: inout JSONObjectWriter)
}

/// Writes one JSON object member by member, straight into bytes: the coalesced writes send thousands of rows a
/// second, and `JSONEncoder` cost several times more per row.
struct JSONObjectWriter {
    private var bytes: [UInt8] = []
    private var isEmpty = true

    mutating func write(_ key: String, _ value: String?) {
        guard let value else { return }
        self.key(key)
        RawJSON.write(string: value, to: &self.bytes)
    }

    mutating func write(_ key: String, _ value: Bool?) {
        guard let value else { return }
        self.key(key)
        self.bytes.append(contentsOf: (value ? "true" : "false").utf8)
    }

    mutating func write(_ key: String, _ value: (some BinaryInteger)?) {
        guard let value else { return }
        self.key(key)
        self.bytes.append(contentsOf: String(value).utf8)
    }

    mutating func write(_ key: String, _ value: Double) {
        self.key(key)
        self.bytes.append(contentsOf: value.description.utf8)
    }

    mutating func write(_ key: String, _ value: UUID) {
        self.write(key, value.lowercaseString)
    }

    /// `null`, where a nested object writes its absent members.
    mutating func writeNull(_ key: String) {
        self.key(key)
        self.bytes.append(contentsOf: "null".utf8)
    }

    /// A nested object.
    mutating func write(_ key: String, object row: (some JSONRow)?) {
        guard let row else { return }
        self.key(key)
        Self.write(row, to: &self.bytes)
    }

    /// A nested array of objects.
    mutating func write(_ key: String, rows: [some JSONRow]) {
        self.key(key)
        JSONRows.write(rows, to: &self.bytes)
    }

    private mutating func key(_ key: String) {
        if !self.isEmpty { self.bytes.append(UInt8(ascii: ",")) }
        self.isEmpty = false
        RawJSON.write(string: key, to: &self.bytes)
        self.bytes.append(UInt8(ascii: ":"))
    }

    /// Appends `row` as an object to `bytes`, which the writer holds meanwhile (moved, never copied).
    fileprivate static func write(_ row: some JSONRow, to bytes: inout [UInt8]) {
        var object = JSONObjectWriter()
        swap(&object.bytes, &bytes)
        object.bytes.append(UInt8(ascii: "{"))
        row.write(to: &object)
        object.bytes.append(UInt8(ascii: "}"))
        swap(&object.bytes, &bytes)
    }
}

/// Rows as one JSON array's text, the `$1` of a statement over `json_to_recordset($1)`.
enum JSONRows {
    static func text(_ rows: [some JSONRow]) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(256 * rows.count)
        Self.write(rows, to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    fileprivate static func write(_ rows: [some JSONRow], to bytes: inout [UInt8]) {
        bytes.append(UInt8(ascii: "["))
        for (index, row) in rows.enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            JSONObjectWriter.write(row, to: &bytes)
        }
        bytes.append(UInt8(ascii: "]"))
    }
}
