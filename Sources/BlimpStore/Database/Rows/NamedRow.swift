import BlimpCore
import PostgresNIO

/// A result row read by column name, each name one of `Column`'s cases: a column that is missing, NULL where a value
/// is required, or of another type throws ``UnreadableColumn`` naming it, instead of postgres-nio's `fatalError` for an
/// unknown name or a positional tuple that must line up with its select list.
struct NamedRow<Column: SelectedColumn> {
    private let cells: PostgresRandomAccessRow

    init(_ row: PostgresRow) {
        self.cells = row.makeRandomAccess()
    }

    /// The column's value; an optional `T` reads NULL as `nil`.
    func decode<T: PostgresDecodable>(_ column: Column, as type: T.Type = T.self) throws(UnreadableColumn) -> T {
        guard self.cells.contains(column.rawValue) else { throw UnreadableColumn(column.rawValue, "missing from the result") }
        do {
            return try self.cells[column.rawValue].decode(T.self)
        } catch let error as PostgresDecodingError where error.code == .missingData {
            throw UnreadableColumn(column.rawValue, "NULL")
        } catch let error as PostgresDecodingError {
            throw UnreadableColumn(column.rawValue, "a \(error.postgresType) is not a \(T.self)")
        } catch {
            throw UnreadableColumn(column.rawValue, "\(error)")
        }
    }

    /// The column as one of a closed set (a state, a kind, a priority).
    func decode<T: RawRepresentable>(_ column: Column, as type: T.Type = T.self) throws(UnreadableColumn) -> T
    where T.RawValue: PostgresDecodable {
        let raw: T.RawValue = try self.decode(column)
        guard let value = T(rawValue: raw) else { throw UnreadableColumn(column.rawValue, "unknown value \(raw)") }
        return value
    }

    /// The column as one of a closed set, or `nil` for NULL.
    func decodeIfPresent<T: RawRepresentable>(_ column: Column, as type: T.Type = T.self) throws(UnreadableColumn) -> T?
    where T.RawValue: PostgresDecodable, T.RawValue._DecodableType == T.RawValue {
        let raw: T.RawValue? = try self.decode(column)
        guard let raw else { return nil }
        guard let value = T(rawValue: raw) else { throw UnreadableColumn(column.rawValue, "unknown value \(raw)") }
        return value
    }

    /// The column as one of a closed set, or `nil` for NULL: what `decode` gives wherever an optional is wanted, so that
    /// an optional field never reads NULL as an error.
    func decode<T: RawRepresentable>(_ column: Column, as type: T?.Type = T?.self) throws(UnreadableColumn) -> T?
    where T.RawValue: PostgresDecodable, T.RawValue._DecodableType == T.RawValue {
        try self.decodeIfPresent(column)
    }

    /// The column's text parsed as JSON (`jsonb` selected as `::text`).
    func json(_ column: Column) throws(UnreadableColumn) -> RawJSON {
        let text: String = try self.decode(column)
        do {
            return try RawJSONParser.parse(text.utf8, numberLength: RawJSONParser.storedNumberLength)
        } catch {
            throw UnreadableColumn(column.rawValue, "\(error.message) at column \(error.column)")
        }
    }
}

/// A column of a stored row that cannot be read as what it must be: its name and what is wrong, without its value.
struct UnreadableColumn: Error, Sendable, CustomStringConvertible {
    var column: String
    var problem: String

    init(_ column: String, _ problem: String) {
        self.column = column
        self.problem = problem
    }

    var description: String { "\(self.column): \(self.problem)" }
}
