import BlimpHTTP2
import NIOHPACK
import Testing

@testable import BlimpSimulator

/// The simulator connection's HTTP/2 state, driven without a channel: the stream limit APNs announces, refused and
/// malformed streams, request bodies and their windows, response bodies held for window, the faults and going away.
@Suite struct SimulatorHTTP2StateTests {
    private static let headers = HPACKHeaders([(":method", "POST"), (":scheme", "https"), (":path", "/3/device/abcd"), ("apns-topic", "t")])

    private static func settings(maxConcurrentStreams: Int = 1000, goAwayEvery: Int = 0, dropEvery: Int = 0) -> ConnectionSettings {
        var settings = ConnectionSettings()
        settings.maxConcurrentStreams = maxConcurrentStreams
        settings.goAwayEvery = goAwayEvery
        settings.dropEvery = dropEvery
        return settings
    }

    /// Opens `streamID` with a well-formed request, describing the action that returns.
    @discardableResult
    private static func open(
        _ streamID: UInt32, endStream: Bool = true, settings: ConnectionSettings = Self.settings(), on state: inout SimulatorHTTP2State
    ) throws -> String? {
        try state.headersReceived(streamID: streamID, request: try RequestHeaderBlock(Self.headers), endStream: endStream, settings: settings).map(describe)
    }

    /// Answers `streamID` as SimulatedAPNs would, with a valid token, and makes its response due.
    private static func answer(
        _ streamID: UInt32, body: [UInt8] = [], settings: ConnectionSettings = Self.settings(), on state: inout SimulatorHTTP2State
    ) -> [String] {
        state.answered(hasValidProviderToken: true, settings: settings)
        var described = state.actions()
        let open = state.respond(to: streamID, body: body)
        #expect(open)
        described += state.actions()
        return described
    }

    // MARK: Streams

    @Test func oneStreamUntilAValidTokenThenTheConfiguredLimit() throws {
        var state = SimulatorHTTP2State()
        #expect(try Self.open(1, endStream: false, on: &state) == nil)
        #expect(try Self.open(3, on: &state) == "refuse 3")
        state.answered(hasValidProviderToken: false, settings: Self.settings(maxConcurrentStreams: 5))
        #expect(state.actions() == [])
        #expect(Self.answer(1, settings: Self.settings(maxConcurrentStreams: 5), on: &state) == ["announce 5"])
        for streamID in stride(from: UInt32(5), through: 13, by: 2) {
            #expect(try Self.open(streamID, endStream: false, on: &state) == nil)
        }
        #expect(try Self.open(15, on: &state) == "refuse 15")
        // The limit is announced once.
        #expect(Self.answer(5, settings: Self.settings(maxConcurrentStreams: 5), on: &state) == [])
        #expect(try Self.open(17, on: &state) == "answer 17 0")
    }

    @Test func streamIDsAreOddAndIncreasing() throws {
        var state = SimulatorHTTP2State()
        #expect(throws: HTTP2Wire.ErrorCode.protocolError) { try Self.open(2, on: &state) }
        #expect(try Self.open(3, on: &state) == "answer 3 0")
        #expect(throws: HTTP2Wire.ErrorCode.protocolError) { try Self.open(1, on: &state) }
        #expect(throws: HTTP2Wire.ErrorCode.protocolError) { try Self.open(3, on: &state) }
        #expect(state.highestStreamID == 3)
    }

    @Test func aMalformedRequestIsResetAndTakesNoStream() throws {
        var state = SimulatorHTTP2State()
        let action = try state.headersReceived(streamID: 1, request: nil, endStream: true, settings: Self.settings())
        #expect(action.map(describe) == "reset 1")
        #expect(try Self.open(3, on: &state) == "answer 3 0")
    }

    @Test func aResetStreamIsForgottenAndGetsNoResponse() throws {
        var state = SimulatorHTTP2State()
        try Self.open(1, on: &state)
        state.resetReceived(streamID: 1)
        let open = state.respond(to: 1, body: [])
        #expect(!open)
        #expect(try Self.open(3, on: &state) == "answer 3 0")
    }

    // MARK: Request bodies

    @Test func aRequestBodyIsGatheredAndItsStreamWindowGivenBackUntilItEnds() throws {
        var state = SimulatorHTTP2State()
        try Self.open(1, endStream: false, on: &state)
        #expect(state.dataReceived(streamID: 1, bytes: [1, 2, 3], flowControlledLength: 4, endStream: false).map(describe) == "window 1 4")
        #expect(state.dataReceived(streamID: 1, bytes: [4, 5], flowControlledLength: 2, endStream: true).map(describe) == "answer 1 5")
        // Once ended, or never opened: nothing.
        #expect(state.dataReceived(streamID: 1, bytes: [6], flowControlledLength: 1, endStream: false) == nil)
        #expect(state.dataReceived(streamID: 7, bytes: [6], flowControlledLength: 1, endStream: false) == nil)
    }

    @Test func aRequestBodyIsKeptOnlyUntilItIsTooLarge() throws {
        var state = SimulatorHTTP2State()
        try Self.open(1, endStream: false, on: &state)
        let chunk = [UInt8](repeating: 0, count: 5000)
        _ = state.dataReceived(streamID: 1, bytes: chunk, flowControlledLength: chunk.count, endStream: false)
        _ = state.dataReceived(streamID: 1, bytes: chunk, flowControlledLength: chunk.count, endStream: false)
        let last = state.dataReceived(streamID: 1, bytes: chunk, flowControlledLength: chunk.count, endStream: true)
        #expect(last.map(describe) == "answer 1 10000")
    }

    // MARK: Response bodies

    @Test func aResponseBodyGoesOutAsTheStreamWindowAllowsAndLaterBodiesWaitBehindIt() throws {
        var state = SimulatorHTTP2State()
        try state.settingsReceived([(HTTP2Wire.Setting.initialWindowSize.rawValue, 10)])
        try Self.open(1, on: &state)
        #expect(Self.answer(1, body: Array(repeating: 0, count: 20), on: &state) == ["announce 1000", "body 1 10"])
        try Self.open(3, on: &state)
        #expect(Self.answer(3, body: [0], on: &state) == [])
        try state.windowUpdateReceived(streamID: 1, increment: 5)
        #expect(state.actions() == ["body 1 5"])
        try state.settingsReceived([(HTTP2Wire.Setting.initialWindowSize.rawValue, 15)])
        #expect(state.actions() == ["body 1 5 end", "body 3 1 end"])
    }

    @Test func theConnectionWindowHoldsResponseBodies() throws {
        var state = SimulatorHTTP2State()
        try Self.open(1, on: &state)
        #expect(Self.answer(1, body: Array(repeating: 0, count: 65_000), on: &state) == ["announce 1000", "body 1 65000 end"])
        try Self.open(3, on: &state)
        #expect(Self.answer(3, body: Array(repeating: 0, count: 600), on: &state) == ["body 3 535"])
        #expect(state.actions() == [])
        try state.windowUpdateReceived(streamID: 0, increment: 64)
        #expect(state.actions() == ["body 3 64"])
        try state.windowUpdateReceived(streamID: 0, increment: 1)
        #expect(state.actions() == ["body 3 1 end"])
    }

    @Test func aWindowPastTwoToTheThirtyOneIsAFlowControlError() throws {
        var state = SimulatorHTTP2State()
        try Self.open(1, endStream: false, on: &state)
        #expect(throws: HTTP2Wire.ErrorCode.flowControlError) {
            try state.windowUpdateReceived(streamID: 1, increment: HTTP2Wire.maximumWindow)
        }
        #expect(throws: HTTP2Wire.ErrorCode.flowControlError) {
            try state.settingsReceived([(HTTP2Wire.Setting.initialWindowSize.rawValue, 0x8000_0000)])
        }
    }

    // MARK: Faults and going away

    @Test func goAwayEveryAnswersTheOpenStreamsIgnoresNewOnesThenCloses() throws {
        var state = SimulatorHTTP2State()
        let settings = Self.settings(goAwayEvery: 2)
        try Self.open(1, settings: settings, on: &state)
        #expect(Self.answer(1, settings: settings, on: &state) == ["announce 1000"])
        try Self.open(3, endStream: false, settings: settings, on: &state)
        try Self.open(5, settings: settings, on: &state)
        state.answered(hasValidProviderToken: true, settings: settings)
        #expect(state.actions() == ["go away 5"])
        #expect(try Self.open(7, settings: settings, on: &state) == nil)
        let open = state.respond(to: 5, body: [])
        #expect(open)
        #expect(state.actions() == [])
        #expect(state.dataReceived(streamID: 3, bytes: [1], flowControlledLength: 1, endStream: true).map(describe) == "answer 3 1")
        #expect(Self.answer(3, settings: settings, on: &state) == ["close output"])
        #expect(state.actions() == [])
    }

    @Test func dropEveryDropsTheConnectionAtThatStream() throws {
        var state = SimulatorHTTP2State()
        let settings = Self.settings(dropEvery: 2)
        #expect(try Self.open(1, settings: settings, on: &state) == "answer 1 0")
        _ = Self.answer(1, settings: settings, on: &state)
        #expect(try Self.open(3, settings: settings, on: &state) == "drop")
    }

    @Test func theClientsGoAwayClosesOnceTheOpenStreamsAreAnswered() throws {
        var state = SimulatorHTTP2State()
        try Self.open(1, on: &state)
        state.goAwayReceived()
        #expect(state.actions() == [])
        #expect(try Self.open(3, on: &state) == nil)
        #expect(Self.answer(1, on: &state) == ["announce 1000", "close output"])
    }
}

extension SimulatorHTTP2State {
    /// Every action until there are none, described in a few words.
    fileprivate mutating func actions() -> [String] {
        var described: [String] = []
        while let action = self.nextAction() { described.append(describe(action)) }
        return described
    }
}

/// An action in a few words; a request by its stream and body size.
private func describe(_ action: SimulatorHTTP2State.Action) -> String {
    switch action {
    case .refuse(let streamID): "refuse \(streamID)"
    case .resetMalformed(let streamID): "reset \(streamID)"
    case .drop: "drop"
    case .answer(let streamID, let request): "answer \(streamID) \(request.body.count)"
    case .updateStreamWindow(let streamID, let increment): "window \(streamID) \(increment)"
    case .announceStreamLimit(let limit): "announce \(limit)"
    case .goAway(let lastStreamID): "go away \(lastStreamID)"
    case .sendBody(let streamID, let body, let endStream): "body \(streamID) \(body.count)\(endStream ? " end" : "")"
    case .closeOutput: "close output"
    }
}
