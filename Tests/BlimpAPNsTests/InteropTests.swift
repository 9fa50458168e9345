import BlimpAPNs
import BlimpCore
import BlimpSimulator
import BlimpTestSupport
import Foundation
import Testing

/// Our hand-written HTTP/2 against implementations we did not write: the simulator serving curl, h2load and a
/// Python `h2` client, and the APNs client talking to nghttpd and a Python `h2` server with a tiny flow-control
/// window. `scripts/test` installs these tools (Debian's nghttp2 packages, PyPI's h2).
@Suite(.enabled(if: ExternalTool.available("curl", "h2load", "nghttpd", "python3") || ProcessInfo.processInfo.environment["CI"] == "true"))
struct InteropTests {
    static let payload = #"{"aps":{"timestamp":1700000000,"event":"update","content-state":{"score":1}}}"#

    /// curl (libcurl over nghttp2) sends a push and gets APNs's answer.
    @Test func curlSendsAPushToTheSimulator() async throws {
        try await SimulatorHarness.with { harness in
            let token = SimulatorHarness.randomToken()
            let result = try await ExternalTool.run("curl", [
                "-s", "--http2", "--cacert", harness.caFile, "-o", "/dev/null", "-w", "%{http_code} %{http_version}",
                "-H", "authorization: bearer \(try ProviderToken(key: harness.key, now: Date()).jwt)",
                "-H", "apns-topic: com.example.demo.push-type.liveactivity", "-H", "apns-push-type: liveactivity",
                "-d", Self.payload, "https://127.0.0.1:\(harness.port)/3/device/\(token)",
            ])
            #expect(result.output == "200 2", "\(result)")
            #expect(harness.apns.deliveries(to: token).count == 1)
        }
    }

    /// h2load (nghttp2's load generator) keeps 20 streams in flight on each of 2 connections.
    @Test func h2loadPushesThroughTheSimulator() async throws {
        try await SimulatorHarness.with { harness in
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("h2load-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: folder) }
            let body = folder.appendingPathComponent("payload.json")
            try Self.payload.write(to: body, atomically: true, encoding: .utf8)
            let result = try await ExternalTool.run("h2load", [
                "-n", "400", "-c", "2", "-m", "20", "-d", body.path,
                "-H", "authorization: bearer \(try ProviderToken(key: harness.key, now: Date()).jwt)",
                "-H", "apns-topic: com.example.demo.push-type.liveactivity", "-H", "apns-push-type: liveactivity",
                "https://127.0.0.1:\(harness.port)/3/device/\(SimulatorHarness.randomToken())",
            ])
            // As APNs does, the simulator allows one stream until a provider token checks out, and refuses the rest of
            // each connection's first burst (RST_STREAM REFUSED_STREAM, which h2load counts as errored); every other
            // request succeeds.
            let counts = try #require(result.output.firstMatch(of: /requests: 400 total, 400 started, 400 done, (\d+) succeeded, (\d+) failed, (\d+) errored, 0 timeout/), "\(result.output)")
            let (succeeded, errored) = (Int(counts.1)!, Int(counts.3)!)
            #expect(succeeded + errored == 400 && errored <= 2 * 19, "\(result.output)")
            #expect(result.output.contains("status codes: \(succeeded) 2xx, 0 3xx, 0 4xx, 0 5xx"), "\(result.output)")
        }
    }

    /// A Python `h2` client opens ten streams at once on one connection; each is answered 200 with an `apns-id`.
    @Test func aPythonH2ClientSendsPushesToTheSimulator() async throws {
        try await SimulatorHarness.with { harness in
            let result = try await ExternalTool.run("python3", [
                "-c", Self.pythonClient, "\(harness.port)", harness.caFile, try ProviderToken(key: harness.key, now: Date()).jwt,
                SimulatorHarness.randomToken(), Self.payload,
            ])
            #expect(result.status == 0 && result.output == "200 200 200 200 200 200 200 200 200 200", "\(result)")
        }
    }

    /// A Python `h2` client still writing (PINGs) for 2.5 s after its second stream, without reading, while the
    /// simulator sends GOAWAY after that stream and answers it: it then reads the GOAWAY, the answer and a clean end
    /// (TLS close_notify). A server that closed the whole connection would reset it on those writes, and a reset loses
    /// what the client had not read yet (NIO drops a read batch that ends in ECONNRESET before TLS hands it on).
    @Test func aClientStillWritingAfterTheGoAwayReadsEveryAnswerAndACleanEnd() async throws {
        var settings = ConnectionSettings()
        settings.goAwayEvery = 2
        try await SimulatorHarness.with(settings: settings) { harness in
            let result = try await ExternalTool.run("python3", [
                "-c", Self.pythonClientStillWriting, "\(harness.port)", harness.caFile,
                try ProviderToken(key: harness.key, now: Date()).jwt, SimulatorHarness.randomToken(), Self.payload,
            ])
            #expect(result.status == 0 && result.output == "goaway 3, answer 3 200, clean end", "\(result)")
        }
    }

    /// The APNs client against nghttpd: it serves files, so every push is a 404 here, and what matters is that each
    /// answer arrives whole, on its own stream, over TLS and HTTP/2 as nghttp2 speaks it.
    @Test func theClientTalksToNghttpd() async throws {
        let responses = try await Self.client(of: { port, folder in
            ("nghttpd", ["-d", folder.path, "\(port)", folder.appendingPathComponent("server-key.pem").path,
                         folder.appendingPathComponent("server.pem").path])
        }, requests: 40)
        #expect(responses.allSatisfy { if case .rejected(404, _, _) = $0 { true } else { false } }, "\(responses)")
    }

    /// The APNs client against a Python `h2` server whose stream windows are 16 bytes and which allows 5 streams at
    /// once: every request's DATA waits for WINDOW_UPDATEs, and the streams beyond 5 wait for a free one. (15 requests
    /// with a minute each: every one of them waits on Python, which beside the whole suite on two cores answered 35
    /// of 40 within 25 seconds.)
    @Test func theClientKeepsToAPythonH2ServersFlowControl() async throws {
        let responses = try await Self.client(of: { port, folder in
            ("python3", ["-c", Self.pythonServer, "\(port)", folder.appendingPathComponent("server.pem").path,
                         folder.appendingPathComponent("server-key.pem").path])
        }, requests: 15, requestTimeout: .seconds(60))
        #expect(responses.allSatisfy(SimulatorHarness.isAccepted), "\(responses)")
    }

    /// Starts a server with a loopback certificate in its folder, sends `requests` pushes to it with a client
    /// that trusts its CA, and returns the answers.
    static func client(
        of server: (_ port: Int, _ folder: URL) -> (tool: String, arguments: [String]), requests: Int,
        requestTimeout: Duration = .seconds(25)
    ) async throws -> [APNsResponse] {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("interop-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let tls = try SimulatorTLS.loadOrCreate(in: folder.path)
        let port = ExternalTool.freePort()
        let (tool, arguments) = server(port, folder)
        let errors = folder.appendingPathComponent("server-errors.txt")
        let process = try ExternalTool.start(tool, arguments, errors: errors)
        defer { ExternalTool.stop(process) }
        try await ExternalTool.waitForPort(port)
        var configuration = APNsClientConfiguration(
            endpoint: try APNsEndpointSettings(overrideURL: "https://127.0.0.1:\(port)", caFile: tls.caFile))
        // Correctness, not speed: the servers are slow while the rest of the suite runs.
        configuration.requestTimeout = requestTimeout
        let client = try APNsClient(configuration: configuration, logger: TestDatabase.logger)
        let key = try APNsSigningKey(pem: TestKeys.p8(), keyID: "ABC123DEFG", teamID: "DEF123GHIJ")
        let pushes = (0..<requests).map { _ in
            APNsRequest(
                deviceToken: DeviceToken(SimulatorHarness.randomToken())!, pushType: .liveActivity,
                topic: "com.example.demo.push-type.liveactivity", priority: .immediate, payload: Array(Self.payload.utf8))
        }
        // A round of requests ends within the request timeout; more than two means the client kept sending again.
        let responses = await withTimeoutOrNil(requestTimeout * 2) { await client.send(pushes, key: key, environment: .sandbox) }
        await client.shutdown()
        let serverErrors = (try? String(contentsOf: errors, encoding: .utf8)) ?? ""
        let answered = try #require(responses, "the client was not done in twice its request timeout; the server's standard error: \(serverErrors)")
        #expect(serverErrors.isEmpty, "the server's standard error: \(serverErrors)")
        return answered
    }

    static let pythonServer = #"""
        import socket, ssl, sys, threading, uuid
        import h2.config, h2.connection, h2.events, h2.settings
        port, cert, key = int(sys.argv[1]), sys.argv[2], sys.argv[3]
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(cert, key)
        context.set_alpn_protocols(["h2"])
        listener = socket.socket()
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", port))
        listener.listen()
        def serve(sock):
            connection = h2.connection.H2Connection(h2.config.H2Configuration(client_side=False))
            connection.initiate_connection()
            sock.sendall(connection.data_to_send())
            # The small window and stream limit go in a second SETTINGS, once the first is acknowledged: h2 counts
            # acknowledgements per setting rather than per frame, and the client may send under the defaults until
            # it has seen the change.
            narrowed = False
            while True:
                data = sock.recv(65536)
                if not data:
                    return
                for event in connection.receive_data(data):
                    if isinstance(event, h2.events.SettingsAcknowledged) and not narrowed:
                        narrowed = True
                        connection.update_settings({h2.settings.SettingCodes.INITIAL_WINDOW_SIZE: 16,
                                                    h2.settings.SettingCodes.MAX_CONCURRENT_STREAMS: 5})
                    elif isinstance(event, h2.events.DataReceived):
                        connection.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
                    elif isinstance(event, h2.events.StreamEnded):
                        connection.send_headers(event.stream_id, [(":status", "200"), ("apns-id", str(uuid.uuid4()).upper())],
                                                end_stream=True)
                sock.sendall(connection.data_to_send())
        while True:
            client, _ = listener.accept()
            try:
                client = context.wrap_socket(client, server_side=True)
            except (ssl.SSLError, OSError):  # the readiness probe connects and leaves
                continue
            threading.Thread(target=serve, args=(client,), daemon=True).start()
        """#

    static let pythonClientStillWriting = #"""
        import socket, ssl, sys, time
        import h2.connection, h2.events
        port, ca, jwt, token, payload = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5].encode()
        context = ssl.create_default_context(cafile=ca)
        context.set_alpn_protocols(["h2"])
        sock = context.wrap_socket(socket.create_connection(("127.0.0.1", port), timeout=20), server_hostname="127.0.0.1")
        connection = h2.connection.H2Connection()
        connection.initiate_connection()
        def push():
            stream = connection.get_next_available_stream_id()
            connection.send_headers(stream, [
                (":method", "POST"), (":scheme", "https"), (":authority", "127.0.0.1"), (":path", "/3/device/" + token),
                ("authorization", "bearer " + jwt), ("apns-topic", "com.example.demo.push-type.liveactivity"),
                ("apns-push-type", "liveactivity"), ("content-length", str(len(payload)))])
            connection.send_data(stream, payload, end_stream=True)
            sock.sendall(connection.data_to_send())
        push()
        ended = False
        while not ended:
            for event in connection.receive_data(sock.recv(65536)):
                ended = ended or isinstance(event, h2.events.StreamEnded)
            sock.sendall(connection.data_to_send())
        push()
        # From here on the frames are read by hand: h2 refuses an answer that follows a GOAWAY.
        received, end = b"", "clean end"
        try:
            for _ in range(25):
                sock.sendall(bytes.fromhex("000008060000000000") + b"12345678")  # PING
                time.sleep(0.1)
            while data := sock.recv(65536):
                received += data
        except OSError as error:
            end = type(error).__name__
        seen = []
        while len(received) >= 9:
            length, kind, stream = int.from_bytes(received[:3], "big"), received[3], int.from_bytes(received[5:9], "big")
            frame, received = received[9:9 + length], received[9 + length:]
            if kind == 7:
                seen.append("goaway %d" % int.from_bytes(frame[:4], "big"))
            elif kind == 1:
                status = dict(connection.decoder.decode(frame)).get(":status", "?")
                seen.append("answer %d %s" % (stream, status))
        print(", ".join(seen + [end]), end="")
        """#

    static let pythonClient = #"""
        import socket, ssl, sys
        import h2.connection, h2.events
        port, ca, jwt, token, payload = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5].encode()
        context = ssl.create_default_context(cafile=ca)
        context.set_alpn_protocols(["h2"])
        sock = context.wrap_socket(socket.create_connection(("127.0.0.1", port), timeout=20), server_hostname="127.0.0.1")
        assert sock.selected_alpn_protocol() == "h2"
        connection = h2.connection.H2Connection()
        connection.initiate_connection()
        streams = []
        for _ in range(10):
            stream = connection.get_next_available_stream_id()
            connection.send_headers(stream, [
                (":method", "POST"), (":scheme", "https"), (":authority", "127.0.0.1"), (":path", "/3/device/" + token),
                ("authorization", "bearer " + jwt), ("apns-topic", "com.example.demo.push-type.liveactivity"),
                ("apns-push-type", "liveactivity"), ("content-length", str(len(payload)))])
            connection.send_data(stream, payload, end_stream=True)
            streams.append(stream)
        sock.sendall(connection.data_to_send())
        statuses = {}
        while len(statuses) < len(streams):
            data = sock.recv(65536)
            if not data:
                break
            for event in connection.receive_data(data):
                if isinstance(event, h2.events.ResponseReceived):
                    headers = dict(event.headers)
                    assert b"apns-id" in headers, headers
                    statuses[event.stream_id] = headers[b":status"].decode()
            sock.sendall(connection.data_to_send())
        print(" ".join(statuses[stream] for stream in streams), end="")
        """#
}
