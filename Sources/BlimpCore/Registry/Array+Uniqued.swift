extension Array where Element: Hashable {
    /// The elements, each once, in the order first seen: a request that names an id twice means it once.
    public func uniqued() -> [Element] {
        var seen = Set<Element>()
        return self.filter { seen.insert($0).inserted }
    }
}
