/// One HTTP/2 request as the simulator's transport hands it to ``SimulatedAPNs``.
public struct SimulatorRequest: Sendable {
    /// `:method`.
    public var method: String
    /// `:path`.
    public var path: String
    /// The regular headers in arrival order, names in lower case (pseudo-headers excluded).
    public var headers: [(name: String, value: String)]
    /// The request body.
    public var body: [UInt8]

    public init(method: String, path: String, headers: [(name: String, value: String)], body: [UInt8]) {
        self.method = method
        self.path = path
        self.headers = headers
        self.body = body
    }
}
