import ArgumentParser
import Foundation

/// `--host`, `--port`, `--public-url` and the console's admin token for the HTTP API.
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

    /// `BLIMP_ADMIN_TOKEN`: signs the deployment admin in to the console (every app, and app management). Read from the
    /// environment only, so that it stays out of process listings; unset or empty turns admin sign-in off.
    var adminToken: String? {
        guard let token = ProcessInfo.processInfo.environment["BLIMP_ADMIN_TOKEN"], !token.isEmpty else { return nil }
        return token
    }

    /// `BLIMP_CONSOLE_MASTER_SECRET_SIGN_IN`: `off` stops apps' master secrets signing in to the console (people then
    /// sign in with their accounts); anything else, or unset, leaves it on.
    var masterSecretSignIn: Bool { ProcessInfo.processInfo.environment["BLIMP_CONSOLE_MASTER_SECRET_SIGN_IN"]?.lowercased() != "off" }
}
