import PostgresNIO

/// The parameters of a query whose SQL is put together as text, from parts that several queries share or that depend
/// on what is asked: ``bind(_:)`` appends a value and returns its placeholder, so that no `$n` is numbered by hand and
/// none can point at another value. A query written in one piece binds through `PostgresQuery`'s interpolation
/// instead.
struct QueryParameters: Sendable {
    private(set) var bindings: PostgresBindings

    /// Parameters that follow `bindings` (none, by default).
    init(after bindings: PostgresBindings = PostgresBindings()) {
        self.bindings = bindings
    }

    /// Appends `value` and returns its placeholder (`$` and its position).
    mutating func bind(_ value: some PostgresDynamicTypeEncodable) -> String {
        self.bindings.append(value)
        return "$\(self.bindings.count)"
    }

    /// `sql` with these parameters.
    func query(_ sql: String) -> PostgresQuery {
        PostgresQuery(unsafeSQL: sql, binds: self.bindings)
    }
}
