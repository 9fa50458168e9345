import AsyncHTTPClient
import BlimpStore
import BlimpTestSupport
import Foundation
import NIOCore
import Testing

@testable import BlimpDispatch

/// Webhook deliveries connect to the address their host's check resolved, never to another answer of the resolver.
@Suite struct WebhookClientsTests {
    /// A private host is refused unless the deployment allows it, and then checked to the address it resolves to.
    @Test func aHostIsCheckedToTheAddressItResolvesTo() async throws {
        guard case .failure(let refusal) = await EndpointResolution.check("https://localhost:8443/hooks") else {
            Issue.record("localhost was let through")
            return
        }
        #expect(refusal.reason.contains("private, loopback or link-local"))
        let allowed = try await EndpointResolution.check("https://localhost:8443/hooks", allowingPrivate: true).get()
        #expect(allowed.host == "localhost" && ["127.0.0.1", "::1"].contains(allowed.address), "\(allowed)")
        let literal = try await EndpointResolution.check("http://[::1]:8443/", allowingPrivate: true).get()
        #expect(literal == EndpointResolution.Checked(host: "::1", address: "::1"))
        guard case .failure(let unresolved) = await EndpointResolution.check("https://hook.invalid/", allowingPrivate: true) else {
            Issue.record("hook.invalid resolved")
            return
        }
        #expect(unresolved.reason == "its host hook.invalid does not resolve")
    }

    /// A delivery to a name that resolves nowhere (`.invalid`, RFC 6761) reaches the receiver through the address it
    /// was checked to, with the name still in its `Host`.
    @Test func aDeliveryConnectsToTheCheckedAddress() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("webhook-clients-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let script = directory.appendingPathComponent("receiver.py")
        let portFile = directory.appendingPathComponent("port")
        try """
            import http.server, os
            class Receiver(http.server.BaseHTTPRequestHandler):
                def do_POST(self):
                    self.rfile.read(int(self.headers.get("Content-Length", 0)))
                    print(self.headers.get("Host"), flush=True)
                    self.send_response(204)
                    self.end_headers()
                def log_message(self, *arguments):
                    pass
            server = http.server.HTTPServer(("127.0.0.1", 0), Receiver)
            server.timeout = 60
            with open(os.environ["PORT_FILE"] + ".tmp", "w") as file:
                file.write(str(server.server_port))
            os.rename(os.environ["PORT_FILE"] + ".tmp", os.environ["PORT_FILE"])
            server.handle_request()
            """.write(to: script, atomically: true, encoding: .utf8)
        let receiver = Task { try await ChildProcess.python(script.path, environment: ["PORT_FILE": portFile.path]) }
        let deadline = ContinuousClock.now + .seconds(60)
        var port: Int?
        while port == nil, ContinuousClock.now < deadline {
            port = (try? String(contentsOf: portFile, encoding: .utf8)).flatMap { Int($0) }
            if port == nil { try await Task.sleep(for: .milliseconds(50)) }
        }
        let listening = try #require(port)

        let clients = WebhookClients()
        let target = EndpointResolution.Checked(host: "hook.invalid", address: "127.0.0.1")
        let client = await clients.acquire(target)
        var request = HTTPClientRequest(url: "http://hook.invalid:\(listening)/hooks")
        request.method = .POST
        request.body = .bytes(ByteBuffer(string: "{}"))
        let response = try await client.execute(request, timeout: .seconds(30))
        await clients.release(target)
        #expect(response.status.code == 204)
        let (status, output) = try await receiver.value
        #expect(status == 0 && output == "hook.invalid:\(listening)\n", "\(output)")
        await clients.shutDown()
    }
}
