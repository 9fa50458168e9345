import ArgumentParser

/// `--host` and `--port` for the HTTP API.
struct ListenOptions: ParsableArguments {
    @Option(help: "The address the API listens on.") var host = "127.0.0.1"
    @Option(help: "The port the API listens on.") var port = 8080
}
