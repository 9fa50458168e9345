/// A one-line failure of a command, shown as `blimp: <message>`.
struct CLIError: Error, CustomStringConvertible {
    let description: String

    init(_ description: String) {
        self.description = description
    }
}
