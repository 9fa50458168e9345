import ArgumentParser
import BlimpCore
import Foundation
import NIOCore

/// `blimp push`: starts, updates or ends a Live Activity by name (or sends an ordinary alert) through a running
/// API, as `curl` to APNs would for one token, but by name and audience. Prints the push id; `--wait` then follows
/// the push's report until it is finished.
struct PushCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "push",
        abstract: "Send a Live Activity start, update or end by name (or an alert) through the Push API.",
        discussion: """
            Authenticates with --token (an API token) or BLIMP_MASTER_SECRET. The audience is every channel unless \
            --tag, --channel or --named-user narrow it (several of them are ORed).
            Examples:
              blimp push --app-key KEY --name match-1 --event update --content-state '{"home":2,"away":1}'
              blimp push --app-key KEY --name match-1 --event start --attributes-type MatchAttributes \\
                --attributes '{"home":"Foxes","away":"Tigers"}' --content-state '{"home":0,"away":0}' \\
                --title Kick-off --body "Foxes v Tigers" --wait
              blimp push --app-key KEY --alert "Doors open at 7" --tag vip
            """
    )

    @Option(help: "The API's URL, http:// or https://.") var url = "http://127.0.0.1:8080"
    @Option(help: "A PEM file of a private certificate authority to trust for an https:// URL.") var caFile: String?
    @Option(help: "Seconds each request to the API may take.") var timeout: Double = 30
    @Option(help: "The app's key.") var appKey: String
    @Option(help: "A server API token (blimp apps token create); else BLIMP_MASTER_SECRET is used.") var token: String?

    @Option(help: "The Live Activity's name.") var name: String?
    @Option(help: "start, update or end.") var event: LiveActivityNotification.Event = .update
    @Option(help: "The ContentState as a JSON object.") var contentState: String?
    @Option(help: "Start: the ActivityAttributes type name.") var attributesType: String?
    @Option(help: "Start: the attributes as a JSON object.") var attributes: String?
    @Option(help: "The alert's title.") var title: String?
    @Option(help: "The alert's body.") var body: String?
    @Option(help: "The alert's sound.") var sound: String?
    @Option(help: "5 or 10.") var priority: Int?
    @Option(help: "The time (epoch seconds) the activity turns stale.") var staleDate: Int64?
    @Option(help: "End: when the ended activity leaves the Lock Screen (epoch seconds).") var dismissalDate: Int64?
    @Option(help: "The timestamp (epoch seconds; default: when Blimp accepts the push).") var timestamp: Int64?

    @Option(help: "Send an ordinary alert with this text instead of a Live Activity push.") var alert: String?

    @Option(help: "A tag the audience has (repeatable).") var tag: [String] = []
    @Option(help: "The tags' group.") var group = "device"
    @Option(help: "A channel id in the audience (repeatable).") var channel: [String] = []
    @Option(help: "A named user in the audience (repeatable).") var namedUser: [String] = []

    @Flag(help: "Follow the push's report until it is done.") var wait = false

    func run() async throws {
        guard self.timeout > 0 else { throw CLIError("--timeout is more than 0 seconds") }
        let authorization = try self.authorization()
        let push = try self.pushObject()
        let headers = authorization + [
            ("Accept", "application/vnd.urbanairship+json; version=3"), ("Content-Type", "application/json"),
        ]
        let timeout = Duration.milliseconds(Int64(self.timeout * 1000))
        try await APIClient.with(url: self.url, headers: headers, timeout: timeout, caFile: self.caFile) { api in
            let (status, answer) = try await api.send(.POST, "/api/push", body: push.text)
            let json = try? RawJSONParser.parse(answer.readableBytesView)
            guard status == .accepted, case .array(let ids)? = json?["push_ids"], case .string(let pushID)? = ids.first else {
                throw CLIError("the API answered \(status.code): \(Self.errorText(json) ?? String(buffer: answer))")
            }
            print(pushID)
            guard self.wait else { return }
            try await Self.follow(pushID, api: api)
        }
    }

    private func authorization() throws -> [(String, String)] {
        if let token = self.token { return [("Authorization", "Bearer \(token)"), ("X-UA-Appkey", self.appKey)] }
        guard let secret = ProcessInfo.processInfo.environment["BLIMP_MASTER_SECRET"] else {
            throw CLIError("give --token or set BLIMP_MASTER_SECRET")
        }
        return [("Authorization", "Basic " + Data("\(self.appKey):\(secret)".utf8).base64EncodedString())]
    }

    /// The push object the options describe; the API checks it.
    func pushObject() throws -> RawJSON {
        var selectors: [RawJSON] = self.tag.map { .object([.init("tag", .string($0)), .init("group", .string(self.group))]) }
        selectors += self.channel.map { .object([.init("ios_channel", .string($0))]) }
        selectors += self.namedUser.map { .object([.init("named_user", .string($0))]) }
        let audience: RawJSON = selectors.isEmpty ? .string("all") : selectors.count == 1 ? selectors[0] : .object([.init("or", .array(selectors))])
        let notification: RawJSON
        if let alert = self.alert {
            guard self.name == nil else { throw CLIError("give --alert or --name, not both") }
            var ios: [RawJSON.Member] = []
            if let title = self.title { ios.append(.init("title", .string(title))) }
            if let sound = self.sound { ios.append(.init("sound", .string(sound))) }
            if let priority = self.priority { ios.append(.init("priority", .integer(Int64(priority)))) }
            notification = .object([.init("alert", .string(alert))] + (ios.isEmpty ? [] : [.init("ios", .object(ios))]))
        } else {
            guard let name = self.name else { throw CLIError("give --name (a Live Activity push) or --alert") }
            var activity: [RawJSON.Member] = [.init("event", .string(self.event.rawValue)), .init("name", .string(name))]
            if let state = self.contentState { activity.append(.init("content_state", try Self.json(state, "--content-state"))) }
            if let type = self.attributesType { activity.append(.init("attributes_type", .string(type))) }
            if let attributes = self.attributes { activity.append(.init("attributes", try Self.json(attributes, "--attributes"))) }
            var alert: [RawJSON.Member] = []
            if let title = self.title { alert.append(.init("title", .string(title))) }
            if let body = self.body { alert.append(.init("body", .string(body))) }
            if let sound = self.sound { alert.append(.init("sound", .string(sound))) }
            if !alert.isEmpty { activity.append(.init("alert", .object(alert))) }
            if let priority = self.priority { activity.append(.init("priority", .integer(Int64(priority)))) }
            if let date = self.staleDate { activity.append(.init("stale_date", .integer(date))) }
            if let date = self.dismissalDate { activity.append(.init("dismissal_date", .integer(date))) }
            if let timestamp = self.timestamp { activity.append(.init("timestamp", .integer(timestamp))) }
            notification = .object([.init("ios", .object([.init("live_activity", .object(activity))]))])
        }
        return .object([
            .init("audience", audience), .init("device_types", .array([.string("ios")])), .init("notification", notification),
        ])
    }

    private static func json(_ text: String, _ option: String) throws -> RawJSON {
        do {
            return try RawJSONParser.parse(text.utf8)
        } catch {
            throw CLIError("\(option) is not JSON: \(error.message) at column \(error.column)")
        }
    }

    /// Prints the push's state and counts on one line, twice a second, until it is finished.
    private static func follow(_ pushID: String, api: APIClient) async throws {
        while true {
            let (status, answer) = try await api.send(.GET, "/api/pushes/\(pushID)")
            guard status == .ok, let report = (try? RawJSONParser.parse(answer.readableBytesView))?["push"],
                case .string(let state)? = report["state"]
            else {
                throw CLIError("the report answered \(status.code): \(String(buffer: answer))")
            }
            let counts = report["counts"]
            func count(_ name: String) -> String { if case .number(let n)? = counts?[name] { n } else { "0" } }
            let line = "\r\(state): \(count("sent"))/\(count("targets")) sent, \(count("skipped_ended")) skipped ended, "
                + "\(count("downgraded_priority")) downgraded   "
            FileHandle.standardError.write(Data(line.utf8))
            if PushState(rawValue: state)?.isFinished ?? true {
                FileHandle.standardError.write(Data("\n".utf8))
                if case .string(let reason)? = report["failure_reason"] {
                    FileHandle.standardError.write(Data("\(state): \(reason)\n".utf8))
                }
                print(report["counts"]?.text ?? "{}")
                return
            }
            try await Task.sleep(for: .milliseconds(500))
        }
    }

    private static func errorText(_ json: RawJSON?) -> String? {
        guard case .string(let error)? = json?["error"] else { return nil }
        if case .string(let detail)? = json?["details"]?["error"] {
            let path = if case .string(let path)? = json?["details"]?["path"] { " (\(path))" } else { "" }
            return "\(error) \(detail)\(path)"
        }
        return error
    }
}

extension LiveActivityNotification.Event: ExpressibleByArgument {}
