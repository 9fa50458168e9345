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

    /// The column's text as one of a closed set of words (a state, a kind).
    func decode<T: RawRepresentable>(_ column: Column, as type: T.Type = T.self) throws(UnreadableColumn) -> T
    where T.RawValue == String {
        let word: String = try self.decode(column)
        guard let value = T(rawValue: word) else { throw UnreadableColumn(column.rawValue, "unknown value \(word)") }
        return value
    }

    /// The column's optional text as one of a closed set of words.
    func decodeIfPresent<T: RawRepresentable>(_ column: Column, as type: T.Type = T.self) throws(UnreadableColumn) -> T?
    where T.RawValue == String {
        let word: String? = try self.decode(column)
        guard let word else { return nil }
        guard let value = T(rawValue: word) else { throw UnreadableColumn(column.rawValue, "unknown value \(word)") }
        return value
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
