/// A column of a query's result, described once by name: the enum case is the alias it is selected as and read back
/// by, and ``expression`` is the SQL it comes from. A row's columns are the cases of one enum, so its select list
/// (``selectList``) and its reading (``NamedRow``) cannot drift apart.
protocol SelectedColumn: RawRepresentable, CaseIterable, Sendable where RawValue == String {
    /// The SQL expression the column is selected from; its alias is the raw value.
    var expression: String { get }
}

extension SelectedColumn {
    /// Every column, each aliased by its name (`expression AS "name"`), for a `SELECT` list.
    static var selectList: String { Self.selectList(Array(Self.allCases)) }

    /// Some of the columns, for a read that needs only those.
    static func selectList(_ columns: [Self]) -> String {
        columns.map { "\($0.expression) AS \"\($0.rawValue)\"" }.joined(separator: ", ")
    }
}
