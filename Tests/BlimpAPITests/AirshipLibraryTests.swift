import BlimpTestSupport
import Foundation
import Testing

/// The official Airship Python library (`pip install urbanairship`), unmodified, against Blimp on a real port:
/// ChannelInfo, ChannelList (paging to the end), ChannelTags, ChannelUninstall, NamedUser, and Push.send() and
/// validate() with Live Activity starts, updates and ends (Python/airship_library.py holds the flows and their checks).
@Suite(.enabled(if: TestDatabase.isEnabled)) struct AirshipLibraryTests {
    @Test func theLibrarysChannelNamedUserAndPushFlowsWork() async throws {
        try await APIHarness.run(.live, publicURL: nil) { harness, client in
            let (status, text) = try await harness.runPython("airship_library.py", on: client, channels: 5, path: "/api/")
            #expect(status == 0, "\(text)")
            #expect(text.contains("all flows passed"), "\(text)")
        }
    }

    /// ScheduledPush (send, from_url, update, pause, resume, cancel) and ScheduledList, in UTC, recurring and in local
    /// time, and their errors (Python/airship_schedules.py).
    @Test func theLibrarysScheduleFlowsWork() async throws {
        try await APIHarness.run(.live, publicURL: nil) { harness, client in
            let (status, text) = try await harness.runPython("airship_schedules.py", on: client, channels: 1, path: "/api/")
            #expect(status == 0, "\(text)")
            #expect(text.contains("all flows passed"), "\(text)")
        }
    }
}
