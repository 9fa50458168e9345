import BlimpCore
import Foundation
import Testing

/// Each state of an activity, derived from the facts on record and the time, on both sides of every boundary.
@Suite struct LiveActivityFactsTests {
    static let start = Date(timeIntervalSince1970: 1_800_000_000)
    static let hour: TimeInterval = 3600

    func at(_ offset: TimeInterval) -> Date { Self.start.addingTimeInterval(offset) }

    func tracked(
        _ record: LiveActivityFacts.Tracked.Record, endedAt: Date? = nil, dismissAt: Date? = nil, updatedAt: Date? = nil
    ) -> LiveActivityFacts.Tracked {
        .init(record: record, startedAt: Self.start, endedAt: endedAt, dismissAt: dismissAt, updatedAt: updatedAt ?? Self.start)
    }

    @Test func nothingOnRecordHasNoState() {
        #expect(LiveActivityFacts().standing(at: Self.start) == nil)
    }

    @Test func anActiveActivityExpiresAtEightHours() {
        let facts = LiveActivityFacts(tracked: self.tracked(.active))
        #expect(facts.standing(at: self.at(8 * Self.hour - 1))?.state == .active)
        #expect(facts.standing(at: self.at(8 * Self.hour))?.state == .expired)
        #expect(facts.standing(at: self.at(8 * Self.hour))?.endedBy == nil)
    }

    @Test func anActiveActivityGoesStaleAfterItsLastDeliveredStaleDate() {
        let facts = LiveActivityFacts(tracked: self.tracked(.active), staleDate: self.at(Self.hour))
        #expect(facts.standing(at: self.at(Self.hour))?.state == .active)
        #expect(facts.standing(at: self.at(Self.hour + 1))?.state == .stale)
        // Past its 8 hours it is expired, stale or not.
        #expect(facts.standing(at: self.at(8 * Self.hour))?.state == .expired)
    }

    @Test func anEndByPushIsEndedUntilItsDismissalDate() {
        let facts = LiveActivityFacts(tracked: self.tracked(.ended, endedAt: self.at(Self.hour), dismissAt: self.at(2 * Self.hour)))
        let ended = facts.standing(at: self.at(2 * Self.hour))
        #expect(ended == LiveActivityStanding(
            state: .ended, startedAt: Self.start, endedBy: .push, endedAt: self.at(Self.hour), dismissAt: self.at(2 * Self.hour)))
        #expect(facts.standing(at: self.at(2 * Self.hour + 1))?.state == .dismissed)
        // An ended activity's stale date and its 8 hours no longer matter.
        #expect(LiveActivityFacts(tracked: facts.tracked, staleDate: Self.start).standing(at: self.at(Self.hour + 1))?.state == .ended)
        #expect(facts.standing(at: self.at(9 * Self.hour))?.state == .dismissed)
    }

    @Test func anEndByPushStaysOneWhenTheDeviceThenRemovesTheActivity() {
        let facts = LiveActivityFacts(tracked: self.tracked(
            .removed, endedAt: self.at(Self.hour), dismissAt: self.at(3 * Self.hour), updatedAt: self.at(Self.hour + 5)))
        let standing = facts.standing(at: self.at(2 * Self.hour))
        #expect(standing?.state == .ended)
        #expect(standing?.endedBy == .push)
        #expect(standing?.endedAt == self.at(Self.hour))
    }

    @Test func anEndOnTheDeviceIsDismissedFourHoursLaterAtTheLatest() {
        let removedAt = self.at(Self.hour)
        let facts = LiveActivityFacts(tracked: self.tracked(.removed, updatedAt: removedAt))
        let ended = facts.standing(at: removedAt)
        #expect(ended == LiveActivityStanding(
            state: .ended, startedAt: Self.start, endedBy: .device, endedAt: removedAt, dismissAt: self.at(5 * Self.hour)))
        #expect(facts.standing(at: self.at(5 * Self.hour))?.state == .ended)
        #expect(facts.standing(at: self.at(5 * Self.hour + 1))?.state == .dismissed)
    }

    @Test func aStartAwaitsItsTokenForEightHours() {
        let facts = LiveActivityFacts(awaiting: .init(sentAt: Self.start))
        #expect(facts.standing(at: self.at(8 * Self.hour - 1)) == LiveActivityStanding(state: .awaitingToken, startedAt: Self.start, awaitsToken: true))
        #expect(facts.standing(at: self.at(8 * Self.hour))?.state == .expired)
        #expect(facts.standing(at: self.at(8 * Self.hour))?.awaitsToken == true)
        // Marked expired by the janitor: expired at once.
        #expect(LiveActivityFacts(awaiting: .init(sentAt: Self.start, expired: true)).standing(at: Self.start)?.state == .expired)
    }

    @Test func theLaterStartIsTheActivity() {
        // An earlier activity of the name, ended, and a start sent after it: the start awaits its token.
        let earlier = self.tracked(.removed, updatedAt: self.at(Self.hour))
        let awaitingLater = LiveActivityFacts(tracked: earlier, awaiting: .init(sentAt: self.at(2 * Self.hour)))
        #expect(awaitingLater.standing(at: self.at(2 * Self.hour))?.state == .awaitingToken)
        // A tracked activity started at or after the start was sent is the activity (a tie goes to it).
        let tie = LiveActivityFacts(tracked: self.tracked(.active), awaiting: .init(sentAt: Self.start))
        #expect(tie.standing(at: Self.start)?.state == .active)
        #expect(tie.standing(at: Self.start)?.awaitsToken == false)
    }
}
