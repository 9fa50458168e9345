// apns-client-bench: sends N Live Activity updates through Blimp's APNs client, with at most M in flight, to any
// APNs-compatible endpoint, and prints the rate in the same line shape as bench/peers/apns-go.
//
//   apns-client-bench --url https://127.0.0.1:2197 --ca ca.pem --p8 AuthKey.p8 [-n 100000] [-c 4] [-m 1000] [-s 200]
//
// -c: connections, -m: requests in flight, -s: streams per connection.
import BlimpAPNs
import BlimpCore
import Foundation
import Logging
import Synchronization

struct Options {
    var url = "https://127.0.0.1:2197"
    var ca: String?
    var p8 = ""
    var kid = "ABC123DEFG"
    var team = "DEF123GHIJ"
    var topic = "com.example.app.push-type.liveactivity"
    var requests = 100_000
    var connections = 4
    var streams = APNsClientConfiguration(endpoint: .apple).maxStreamsPerConnection
    var inFlight = 1000

    init(_ arguments: ArraySlice<String>) {
        var arguments = arguments
        while let flag = arguments.popFirst() {
            guard let value = arguments.popFirst() else { Self.usage("\(flag) needs a value") }
            switch flag {
            case "--url": self.url = value
            case "--ca": self.ca = value
            case "--p8": self.p8 = value
            case "--kid": self.kid = value
            case "--team": self.team = value
            case "--topic": self.topic = value
            case "-n": self.requests = Self.number(value, for: flag)
            case "-c": self.connections = Self.number(value, for: flag)
            case "-m": self.inFlight = Self.number(value, for: flag)
            case "-s": self.streams = Self.number(value, for: flag)
            default: Self.usage("unknown option \(flag)")
            }
        }
    }

    static func number(_ value: String, for flag: String) -> Int {
        guard let number = Int(value), number > 0 else { Self.usage("\(flag) takes a positive number") }
        return number
    }

    static func usage(_ problem: String) -> Never {
        FileHandle.standardError.write(Data("apns-client-bench: \(problem)\n".utf8))
        exit(2)
    }
}

/// The WWDC23 sample update the peer sends.
let payload = Array(
    #"{"aps":{"timestamp":1685952000,"event":"update","content-state":{"currentHealthLevel":0.941,"eventDescription":"Power Panda found a sword!"}}}"#
        .utf8
)

func request(_ index: Int, topic: String) -> APNsRequest {
    let hex = String(index + 1, radix: 16)
    let token = DeviceToken(String(repeating: "0", count: 64 - hex.count) + hex)!
    return APNsRequest(deviceToken: token, pushType: .liveActivity, topic: topic, priority: .immediate, payload: payload)
}

let options = Options(CommandLine.arguments.dropFirst())
let key: APNsSigningKey
do {
    key = try APNsSigningKey(pem: String(contentsOfFile: options.p8, encoding: .utf8), keyID: options.kid, teamID: options.team)
} catch {
    Options.usage("cannot read the signing key \(options.p8): \(error)")
}
var configuration = APNsClientConfiguration(endpoint: try APNsEndpointSettings(overrideURL: options.url, caFile: options.ca))
configuration.maxConnections = options.connections
configuration.maxStreamsPerConnection = options.streams
let client = try APNsClient(configuration: configuration, logger: Logger(label: "apns-client-bench"))

// One request first, as the peer does: it opens a connection and lifts the stream limit.
_ = await client.send(request(0, topic: options.topic), key: key, environment: .production)

let next = Atomic(0)
let succeeded = Atomic(0)
let started = ContinuousClock.now
await withTaskGroup(of: Void.self) { group in
    for _ in 0..<options.inFlight {
        group.addTask {
            while true {
                let index = next.wrappingAdd(1, ordering: .relaxed).oldValue
                guard index < options.requests else { return }
                if case .accepted = await client.send(request(index, topic: options.topic), key: key, environment: .production) {
                    succeeded.wrappingAdd(1, ordering: .relaxed)
                }
            }
        }
    }
}
let seconds = (ContinuousClock.now - started) / .seconds(1)
await client.shutdown()
let ok = succeeded.load(ordering: .relaxed)
print(
    "blimp: \(options.requests) sent, \(ok) ok, \(options.requests - ok) failed, "
        + String(format: "%.2fs, %.0f req/s", seconds, Double(options.requests) / seconds)
)
