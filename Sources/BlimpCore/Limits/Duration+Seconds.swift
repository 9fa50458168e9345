extension Duration {
    /// The duration in seconds, fractions included.
    public var seconds: Double { Double(self.components.seconds) + Double(self.components.attoseconds) / 1e18 }

    /// The duration in whole milliseconds (what PostgreSQL's `statement_timeout` counts).
    public var wholeMilliseconds: Int64 { self.components.seconds * 1000 + self.components.attoseconds / 1_000_000_000_000_000 }
}
