extension Duration {
    /// The duration in seconds, fractions included.
    public var seconds: Double { Double(self.components.seconds) + Double(self.components.attoseconds) / 1e18 }
}
