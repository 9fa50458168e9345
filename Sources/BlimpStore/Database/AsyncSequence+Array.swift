extension AsyncSequence {
    /// Every element, in order.
    func array() async throws -> [Element] {
        var elements: [Element] = []
        for try await element in self { elements.append(element) }
        return elements
    }
}
