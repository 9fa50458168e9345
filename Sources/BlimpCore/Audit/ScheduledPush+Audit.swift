extension ScheduledPush {
    /// What a schedule's audit entries tell of it beside its id: its name, if it has one.
    public var auditDetails: RawJSON? {
        self.name.map { .object([.init("name", .string($0))]) }
    }
}
