import BlimpCore
import PostgresNIO

/// A column of a table that a multi-row insert writes from one JSON array (`jsonb_to_recordset`), described once by
/// name: the enum case is the record's field and the column, ``recordType`` the field's type in the record, and
/// ``valueExpression`` the SQL that turns the field into the column's value. Each row is a ``Record`` of these
/// columns; a field a record leaves out is NULL, so the column takes NULL (not its default).
protocol RecordColumn: RawRepresentable, CaseIterable, Sendable where RawValue == String {
    /// The field's type in the JSON record (`bigint`, `uuid`, `jsonb`…).
    var recordType: String { get }
    /// The column's value from the record's field, which is `r.<name>` (by default the field itself).
    var valueExpression: String { get }
}

extension RecordColumn {
    var valueExpression: String { "r.\(self.rawValue)" }

    /// Every field with its type, for `jsonb_to_recordset(records) AS r (fields)`.
    static var recordFields: String { Self.allCases.map { "\($0.rawValue) \($0.recordType)" }.joined(separator: ", ") }

    /// `INSERT INTO table (every column) SELECT … FROM jsonb_to_recordset(records)`, then `suffix` (an `ON CONFLICT`
    /// or `RETURNING` clause), with the records as one JSON parameter.
    static func insert(into table: String, _ records: [Record<Self>], suffix: String = "") -> PostgresQuery {
        let records = RawJSON.array(records.map(\.json)).text
        return """
            \(unescaped: Self.insertSelect(into: table)) FROM jsonb_to_recordset(\(records)::jsonb) AS r (\(unescaped: Self.recordFields)) \
            \(unescaped: suffix)
            """
    }

    /// `INSERT INTO table (every column) SELECT (each column's value)`, for a statement to follow with
    /// `FROM jsonb_to_recordset(records) AS r (recordFields)` (a prepared statement, which numbers its own parameters).
    static func insertSelect(into table: String) -> String {
        let columns = Self.allCases.map(\.rawValue).joined(separator: ", ")
        let values = Self.allCases.map(\.valueExpression).joined(separator: ", ")
        return "INSERT INTO \(table) (\(columns)) SELECT \(values)"
    }
}

/// One row of a multi-row insert: its columns' values by name, as one JSON object.
struct Record<Column: RecordColumn> {
    private var members: [RawJSON.Member] = []

    init() {}

    /// Sets `column`; `nil` leaves it out, so it is NULL.
    mutating func set(_ column: Column, _ value: RawJSON?) {
        if let value { self.members.append(RawJSON.Member(column.rawValue, value)) }
    }

    var json: RawJSON { .object(self.members) }
}
