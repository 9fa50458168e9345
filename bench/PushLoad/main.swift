// push-load: bench/per-user.sh's client. Posts one update of the shared name `delivery` per user to `POST /api/push`,
// users FIRST...LAST (user i's channel is md5("user/i") read as a UUID, as the bench's SQL makes it; every other update
// carries the caller's timestamp), from C connections, as fast as answered or paced to RATE pushes/s in all (0:
// unpaced). Prints a table row: pushes, seconds, pushes/s, p50 and p99 ms, answers by status (0: no answer).
//
//   push-load PORT APP_KEY:SECRET FIRST LAST CONNECTIONS [RATE]
import AsyncHTTPClient
import Crypto
import Foundation
import NIOCore

func usage() -> Never {
    FileHandle.standardError.write(Data("usage: push-load PORT APP_KEY:SECRET FIRST LAST CONNECTIONS [RATE]\n".utf8))
    exit(2)
}

let arguments = CommandLine.arguments
guard arguments.count >= 6, let port = Int(arguments[1]), let first = Int(arguments[3]), let last = Int(arguments[4]),
    let connections = Int(arguments[5]), connections > 0, first <= last
else { usage() }
guard let rate = arguments.count > 6 ? Double(arguments[6]) : 0 else { usage() }
let authorization = "Basic " + Data(arguments[2].utf8).base64EncodedString()
let stamp = Int(Date().timeIntervalSince1970)

/// User `user`'s channel id: PostgreSQL's `md5('user/' || i)::uuid`, the digest's bytes in order.
func channel(of user: Int) -> String {
    let digest = Array(Insecure.MD5.hash(data: Data("user/\(user)".utf8)))
    return UUID(uuid: (digest[0], digest[1], digest[2], digest[3], digest[4], digest[5], digest[6], digest[7], digest[8],
                       digest[9], digest[10], digest[11], digest[12], digest[13], digest[14], digest[15])).uuidString.lowercased()
}

func body(of user: Int) -> String {
    let timestamp = user % 2 == 0 ? #","timestamp":\#(stamp)"# : ""
    return #"{"audience":{"ios_channel":"\#(channel(of: user))"},"device_types":["ios"],"notification":{"ios":{"live_activity":"#
        + #"{"event":"update","name":"delivery","priority":5,"content_state":{"user":\#(user)}\#(timestamp)}}}}"#
}

/// What one connection's requests got: answers by status, and each request's milliseconds.
struct Lane: Sendable {
    var statuses: [Int: Int] = [:]
    var milliseconds: [Double] = []
}

let client = HTTPClient(
    eventLoopGroupProvider: .singleton,
    configuration: .init(connectionPool: .init(idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: connections)))
let clock = ContinuousClock()
let began = clock.now

/// Connection `lane`'s users, in turn; when paced, its n-th request is due (n × connections + lane) / rate after the
/// start, so that requests arrive evenly spread rather than one from every connection at once.
func post(lane: Int) async -> Lane {
    var result = Lane()
    for (n, user) in stride(from: first + lane, through: last, by: connections).enumerated() {
        if rate > 0 { try? await Task.sleep(until: began + .seconds(Double(n * connections + lane) / rate), clock: clock) }
        var request = HTTPClientRequest(url: "http://127.0.0.1:\(port)/api/push")
        request.method = .POST
        request.headers.add(name: "Authorization", value: authorization)
        request.headers.add(name: "Accept", value: "application/vnd.urbanairship+json; version=3")
        request.headers.add(name: "Content-Type", value: "application/json")
        request.body = .bytes(ByteBuffer(string: body(of: user)))
        let sent = clock.now
        var status = 0
        if let response = try? await client.execute(request, timeout: .seconds(60)) {
            _ = try? await response.body.collect(upTo: 1 << 20)
            status = Int(response.status.code)
        }
        let elapsed = clock.now - sent
        result.statuses[status, default: 0] += 1
        result.milliseconds.append(Double(elapsed.components.seconds) * 1000 + Double(elapsed.components.attoseconds) / 1e15)
    }
    return result
}

let lanes = await withTaskGroup(of: Lane.self) { group in
    for lane in 0..<connections { group.addTask { await post(lane: lane) } }
    var lanes: [Lane] = []
    for await lane in group { lanes.append(lane) }
    return lanes
}
let elapsed = clock.now - began
let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
try? await (client.shutdown() as EventLoopFuture<Void>).get()

let milliseconds = lanes.flatMap(\.milliseconds).sorted()
let statuses = lanes.reduce(into: [Int: Int]()) { all, lane in all.merge(lane.statuses, uniquingKeysWith: +) }
func percentile(_ q: Double) -> Double { milliseconds[min(milliseconds.count - 1, Int(Double(milliseconds.count) * q))] }
let pushes = last - first + 1
let answers = statuses.sorted { $0.key < $1.key }.map { "\($0.value) × \($0.key)" }.joined(separator: ", ")
print(String(format: "| %d | %.2f | %.0f | %.1f | %.1f | ", pushes, seconds, Double(pushes) / seconds, percentile(0.5), percentile(0.99)) + answers + " |")
