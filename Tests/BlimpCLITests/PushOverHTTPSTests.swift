import BlimpSimulator
import Foundation
import Testing

/// `blimp push` to an API behind TLS (a stand-in that answers as the Push API does, over HTTPS with a private CA),
/// and its timeout against one that never answers.
@Suite struct PushOverHTTPSTests {
    /// A tiny HTTPS server: `answer` replies 202 with a push id; `hang` accepts requests and never replies.
    static let server = #"""
        import http.server, json, ssl, sys, time
        mode, port, cert, key = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self):
                self.rfile.read(int(self.headers["Content-Length"]))
                if mode == "hang":
                    time.sleep(60)
                body = json.dumps({"ok": True, "operation_id": "o", "push_ids": ["9adb1c2e-4f5a-4b6c-8d7e-0f1a2b3c4d5e"]}).encode()
                self.send_response(202)
                self.send_header("Content-Type", "application/vnd.urbanairship+json; version=3")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
            def log_message(self, *args):
                pass
        server = http.server.ThreadingHTTPServer(("127.0.0.1", port), Handler)
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(cert, key)
        server.socket = context.wrap_socket(server.socket, server_side=True)
        server.serve_forever()
        """#

    static func withServer<T>(_ mode: String, _ body: (_ port: Int, _ caFile: String) async throws -> T) async throws -> T {
        try await withTemporaryFolder { folder in
            _ = try SimulatorTLS.loadOrCreate(in: folder.path)
            let port = freePort()
            let server = Process()
            server.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
            server.arguments = ["-c", Self.server, mode, "\(port)", folder.appendingPathComponent("server.pem").path,
                                folder.appendingPathComponent("server-key.pem").path]
            // Not the test's own output: a child holding it open would keep `swift test` waiting.
            (server.standardInput, server.standardOutput, server.standardError) = (FileHandle.nullDevice, FileHandle.nullDevice, FileHandle.nullDevice)
            try server.run()
            defer {
                kill(server.processIdentifier, SIGKILL)
                server.waitUntilExit()
            }
            for _ in 0..<100 {
                if (try? await waitUntilListening(port)) == true { break }
                try await Task.sleep(for: .milliseconds(100))
            }
            return try await body(port, folder.appendingPathComponent("ca.pem").path)
        }
    }

    @Test func pushesGoOverHTTPSTrustingAPrivateCA() async throws {
        try await Self.withServer("answer") { port, caFile in
            let arguments = ["push", "--url", "https://127.0.0.1:\(port)", "--app-key", "k", "--alert", "hi"]
            let untrusted = try await BlimpProcess.run(arguments, environment: ["BLIMP_MASTER_SECRET": "s"])
            #expect(untrusted.status != 0 && untrusted.stderr.contains("failed: TLS"), "\(untrusted.stderr)")
            let trusted = try await BlimpProcess.run(arguments + ["--ca-file", caFile], environment: ["BLIMP_MASTER_SECRET": "s"])
            #expect(trusted.status == 0, "\(trusted.stderr)")
            #expect(trusted.stdout == "9adb1c2e-4f5a-4b6c-8d7e-0f1a2b3c4d5e\n")
        }
    }

    @Test func anAPIThatDoesNotAnswerTimesOut() async throws {
        try await Self.withServer("hang") { port, caFile in
            let started = ContinuousClock.now
            let result = try await BlimpProcess.run(
                ["push", "--url", "https://127.0.0.1:\(port)", "--app-key", "k", "--alert", "hi", "--ca-file", caFile, "--timeout", "1"],
                environment: ["BLIMP_MASTER_SECRET": "s"])
            #expect(result.status != 0)
            #expect(result.stderr == "blimp: POST https://127.0.0.1:\(port)/api/push timed out after 1 s\n", "\(result.stderr)")
            #expect(started.duration(to: .now) < .seconds(10))
        }
    }
}

/// Whether something accepts connections on the loopback `port`.
private func waitUntilListening(_ port: Int) async throws -> Bool {
    let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    defer { close(socket) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = in_port_t(UInt16(port).bigEndian)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    return withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
    }
}
