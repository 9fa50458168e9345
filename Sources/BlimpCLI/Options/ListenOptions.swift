import ArgumentParser
import Foundation

/// `--host`, `--port` and `--public-url` for the HTTP API.
struct ListenOptions: ParsableArguments {
    @Option(help: "The address the API listens on.") var host = "127.0.0.1"
    @Option(help: "The port the API listens on.") var port = 8080
    @Option(
        name: .customLong("public-url"),
        help: """
            Where devices and clients reach the API (e.g. https://push.example.com): the SDK's remote config and \
            paging links name it. Defaults to BLIMP_PUBLIC_URL, else each request's Host.
            """
    )
    var publicURLFlag: String?

    /// `--public-url`, else `BLIMP_PUBLIC_URL`.
    var publicURL: String? { self.publicURLFlag ?? ProcessInfo.processInfo.environment["BLIMP_PUBLIC_URL"] }
}
