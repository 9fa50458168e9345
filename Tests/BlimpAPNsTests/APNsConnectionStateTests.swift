import BlimpCore
import BlimpHTTP2
import NIOCore
import Testing

@testable import BlimpAPNs

/// The APNs connection's protocol state, driven without a channel: streams under the server's limit, flow control,
/// GOAWAY, resets, deadlines and the end of the connection. Requests are told apart by their topic (`r0`, `r1`…) and
/// their replies by number.
@Suite struct APNsConnectionStateTests {
    private typealias State = APNsConnectionState<Int>

    private static let start = NIODeadline.uptimeNanoseconds(1_000_000_000)

    private static func state(maxStreams: Int = 100, limit: UInt32? = nil, initialWindow: UInt32? = nil, firstStreamID: UInt32 = 1) throws -> State {
        var state = State(maxStreams: maxStreams, requestTimeout: .seconds(10), firstStreamID: firstStreamID)
        var settings: [(identifier: UInt16, value: UInt32)] = []
        if let limit { settings.append((HTTP2Wire.Setting.maxConcurrentStreams.rawValue, limit)) }
        if let initialWindow { settings.append((HTTP2Wire.Setting.initialWindowSize.rawValue, initialWindow)) }
        try state.settingsReceived(settings)
        return state
    }

    /// Request number `number`, with a payload of `bytes` bytes.
    private static func request(_ number: Int, bytes: Int = 10) -> APNsRequest {
        APNsRequest(
            deviceToken: DeviceToken(String(repeating: "ab", count: 32))!,
            pushType: .liveActivity,
            topic: "r\(number)",
            payload: Array(repeating: UInt8(ascii: "x"), count: bytes)
        )
    }

    private static func enqueue(_ numbers: Range<Int>, bytes: Int = 10, on state: inout State, at now: NIODeadline = start) {
        for number in numbers {
            state.enqueue(Self.request(number, bytes: bytes), authorization: "bearer t", reply: number, now: now)
        }
    }

    // MARK: Stream limit

    @Test func oneStreamOpensUntilTheServerAllowsMoreAndAFinishedStreamLetsTheNextGo() throws {
        var state = try Self.state()
        Self.enqueue(0..<3, on: &state)
        #expect(state.actions() == ["open 1 r0 10"])
        try state.settingsReceived([(HTTP2Wire.Setting.maxConcurrentStreams.rawValue, 2)])
        #expect(state.streamLimit == 2)
        #expect(state.actions() == ["open 3 r1 10"])
        state.headersReceived(streamID: 1, status: 200, apnsID: "id0", endStream: true)
        #expect(state.actions() == ["complete 0 accepted id0", "open 5 r2 10"])
    }

    @Test func theServersLimitIsCappedByMaxStreams() throws {
        var state = try Self.state(maxStreams: 2, limit: 100)
        #expect(state.streamLimit == 2)
        Self.enqueue(0..<3, on: &state)
        #expect(state.actions() == ["open 1 r0 10", "open 3 r1 10"])
    }

    // MARK: Flow control

    @Test func aBodyLargerThanItsStreamWindowWaitsForWindowUpdateAndLaterBodiesWaitBehindIt() throws {
        var state = try Self.state(limit: 10, initialWindow: 10)
        Self.enqueue(0..<1, bytes: 25, on: &state)
        Self.enqueue(1..<2, bytes: 4, on: &state)
        #expect(state.actions() == ["open 1 r0 10", "open 3 r1 0"])
        try state.windowUpdateReceived(streamID: 1, increment: 5)
        #expect(state.actions() == ["data 1 5"])
        try state.windowUpdateReceived(streamID: 1, increment: 100)
        #expect(state.actions() == ["data 1 10 end", "data 3 4 end"])
    }

    @Test func theConnectionWindowHoldsDataAcrossStreams() throws {
        var state = try Self.state(limit: 10)
        Self.enqueue(0..<2, bytes: 40_000, on: &state)
        #expect(state.actions() == ["open 1 r0 40000", "open 3 r1 25535"])
        try state.windowUpdateReceived(streamID: 3, increment: 50_000)
        #expect(state.actions() == [])
        try state.windowUpdateReceived(streamID: 0, increment: 20_000)
        #expect(state.actions() == ["data 3 14465 end"])
    }

    @Test func aNewInitialWindowSizeMovesTheOpenStreamsWindows() throws {
        var state = try Self.state(initialWindow: 10)
        Self.enqueue(0..<1, bytes: 25, on: &state)
        #expect(state.actions() == ["open 1 r0 10"])
        try state.settingsReceived([(HTTP2Wire.Setting.initialWindowSize.rawValue, 30)])
        #expect(state.actions() == ["data 1 15 end"])
    }

    @Test func aWindowPastTwoToTheThirtyOneIsAFlowControlError() throws {
        var state = try Self.state()
        Self.enqueue(0..<1, on: &state)
        _ = state.actions()
        #expect(throws: HTTP2Wire.ErrorCode.flowControlError) {
            try state.windowUpdateReceived(streamID: 1, increment: HTTP2Wire.maximumWindow)
        }
        #expect(throws: HTTP2Wire.ErrorCode.flowControlError) {
            try state.windowUpdateReceived(streamID: 0, increment: HTTP2Wire.maximumWindow)
        }
        #expect(throws: HTTP2Wire.ErrorCode.flowControlError) {
            try state.settingsReceived([(HTTP2Wire.Setting.initialWindowSize.rawValue, 0x8000_0000)])
        }
    }

    // MARK: Answers and resets

    @Test func aRejectionCarriesItsStatusAndReasonFromTheBody() throws {
        var state = try Self.state()
        Self.enqueue(0..<1, on: &state)
        _ = state.actions()
        state.headersReceived(streamID: 1, status: 400, apnsID: "id0", endStream: false)
        #expect(state.actions() == [])
        state.dataReceived(streamID: 1, data: ByteBuffer(string: #"{"reason":"BadDeviceToken"}"#), endStream: true)
        #expect(state.actions() == ["complete 0 rejected 400 BadDeviceToken"])
    }

    @Test func anAnswerIsTimedFromItsStreamsOpeningAndNoAnswerIsNot() throws {
        var state = try Self.state(limit: 2)
        Self.enqueue(0..<2, on: &state)
        _ = state.actions()
        state.headersReceived(streamID: 1, status: 200, apnsID: "id0", endStream: true)
        state.resetReceived(streamID: 3, errorCode: HTTP2Wire.ErrorCode.cancel.rawValue)
        var timings: [TimeAmount?] = []
        while let action = state.nextAction(now: Self.start + .milliseconds(1500)) {
            if case .complete(_, _, let answeredIn) = action { timings.append(answeredIn) }
        }
        #expect(timings == [.milliseconds(1500), nil])
    }

    @Test func aRefusedStreamIsNotProcessedAndAnyOtherResetIsNoResponse() throws {
        var state = try Self.state(limit: 2)
        Self.enqueue(0..<2, on: &state)
        _ = state.actions()
        state.resetReceived(streamID: 1, errorCode: HTTP2Wire.ErrorCode.refusedStream.rawValue)
        state.resetReceived(streamID: 3, errorCode: HTTP2Wire.ErrorCode.cancel.rawValue)
        #expect(state.actions() == ["complete 0 not processed", "complete 1 no response"])
    }

    // MARK: Going away

    @Test func goAwayHandsBackWhatTheServerDidNotProcessAndClosesOnceTheRestIsAnswered() throws {
        var state = try Self.state(limit: 2)
        Self.enqueue(0..<3, on: &state)
        #expect(state.actions() == ["open 1 r0 10", "open 3 r1 10"])
        state.goAwayReceived(lastStreamID: 1)
        #expect(state.actions() == ["stop taking requests", "complete 1 not processed", "complete 2 not processed"])
        Self.enqueue(3..<4, on: &state)
        #expect(state.actions() == ["complete 3 not processed"])
        state.headersReceived(streamID: 1, status: 200, apnsID: "id0", endStream: true)
        #expect(state.actions() == ["complete 0 accepted id0", "close"])
    }

    @Test func spentStreamIDsEndTheConnectionLikeGoAway() throws {
        var state = try Self.state(limit: 10, firstStreamID: 0x7FFF_FFFF)
        Self.enqueue(0..<3, on: &state)
        #expect(state.actions() == ["open 2147483647 r0 10", "stop taking requests", "complete 1 not processed", "complete 2 not processed"])
        state.headersReceived(streamID: 0x7FFF_FFFF, status: 200, apnsID: "id0", endStream: true)
        #expect(state.actions() == ["complete 0 accepted id0", "close"])
    }

    @Test func aLostConnectionFailsWhatIsInFlightAndHandsBackWhatWaits() throws {
        var state = try Self.state()
        Self.enqueue(0..<2, on: &state)
        #expect(state.actions() == ["open 1 r0 10"])
        state.connectionClosed()
        #expect(state.actions() == ["stop taking requests", "complete 0 no response", "complete 1 not processed"])
        Self.enqueue(2..<3, on: &state)
        #expect(state.actions() == ["complete 2 not processed"])
    }

    // MARK: Deadlines

    @Test func anOverdueStreamIsCancelledAndARequestThatWaitedTooLongIsGivenUp() throws {
        var state = try Self.state()
        Self.enqueue(0..<1, on: &state)
        Self.enqueue(1..<3, on: &state, at: Self.start + .seconds(5))
        #expect(state.actions() == ["open 1 r0 10"])
        state.timeOut(now: Self.start + .seconds(9))
        #expect(state.actions() == [])
        state.timeOut(now: Self.start + .seconds(10))
        #expect(state.actions() == ["complete 0 no response", "cancel 1", "open 3 r1 10"])
        state.timeOut(now: Self.start + .seconds(15))
        #expect(state.actions() == ["complete 2 no response", "complete 1 no response", "cancel 3"])
        // A late answer to a cancelled stream is ignored.
        state.headersReceived(streamID: 3, status: 200, apnsID: "id1", endStream: true)
        #expect(state.actions() == [])
    }
}

extension APNsConnectionState<Int> {
    /// Every action until there are none, described in a few words.
    fileprivate mutating func actions(now: NIODeadline = .uptimeNanoseconds(1_000_000_000)) -> [String] {
        var described: [String] = []
        while let action = self.nextAction(now: now) {
            switch action {
            case .stopTakingRequests:
                described.append("stop taking requests")
            case .complete(let reply, let outcome, _):
                described.append("complete \(reply) \(Self.describe(outcome))")
            case .open(let streamID, let request, _, let bodyBytes):
                described.append("open \(streamID) \(request.topic) \(bodyBytes)")
            case .sendData(let streamID, let bytes, let endStream):
                described.append("data \(streamID) \(bytes.count)\(endStream ? " end" : "")")
            case .cancel(let streamID):
                described.append("cancel \(streamID)")
            case .close:
                described.append("close")
            }
        }
        return described
    }

    private static func describe(_ outcome: StreamOutcome) -> String {
        switch outcome {
        case .notProcessed: "not processed"
        case .response(.accepted(let apnsID, _)): "accepted \(apnsID)"
        case .response(.rejected(let status, let reason, _)): "rejected \(status) \(reason?.rawValue ?? "-")"
        case .response(.noResponse): "no response"
        }
    }
}
