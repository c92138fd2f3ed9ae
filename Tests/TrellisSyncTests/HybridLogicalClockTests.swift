import Foundation
import Testing
import TrellisSyncProtocol

/// The hybrid logical clock and the server's bounds on timestamps (issue 36 item 5), with the
/// clock source injected.
struct HybridLogicalClockTests {
    @Test func editAfterObservingALaterRemoteTimestampIsLaterEvenWithTheWallClockBehind() {
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        var ahead = HybridLogicalClock(clientId: "a")
        let remote = ahead.tick(now: now)
        var behind = HybridLogicalClock(clientId: "b")
        behind.observe(remote.description)
        let local = behind.tick(now: now.addingTimeInterval(-3600))
        #expect(local > remote)
        #expect(local.description > remote.description)
        #expect(local.clientId == "b")
    }

    @Test func counterNeverOverflowsItsFiveDigits() {
        let frozen = Date(timeIntervalSince1970: 1_800_000_000)
        var clock = HybridLogicalClock(clientId: "c", last: HybridTimestamp(
            milliseconds: HybridTimestamp.milliseconds(of: frozen), counter: HybridTimestamp.maxCounter - 1, clientId: "c"))
        let first = clock.tick(now: frozen), second = clock.tick(now: frozen)
        #expect(first.counter == HybridTimestamp.maxCounter)
        #expect(second.milliseconds == first.milliseconds + 1 && second.counter == 0)
        #expect(first.description < second.description)
        #expect(HybridTimestamp(second.description) == second)
    }

    @Test func onlyWellFormedTimestampTextIsRead() {
        #expect(HybridTimestamp("0001732512345678-00000-client") != nil)
        for bad in ["~~~~", "", "1-0-a", "0001732512345678-00000-", "+001732512345678-00000-a",
                    "0001732512345678-0000a-a", "00017325123456789-00000-a", "0001732512345678-00000-a b"] {
            #expect(HybridTimestamp(bad) == nil, "\(bad)")
        }
        var clock = HybridLogicalClock(clientId: "x")
        clock.observe("~~~~")
        #expect(clock.last.milliseconds == 0)
    }

    @Test func serverRefusesMalformedAndClampsFarFutureTimestamps() {
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let bounds = TimestampBounds(maxSkewMilliseconds: 300_000)
        let nowMillis = HybridTimestamp.milliseconds(of: now)
        guard case .refused(let reason) = bounds.check("~~~~", clientId: "c", now: now) else {
            Issue.record("~~~~ was not refused")
            return
        }
        #expect(reason.contains("not a hybrid logical clock timestamp"))
        let near = HybridTimestamp(milliseconds: nowMillis + 299_000, counter: 3, clientId: "c").description
        #expect(bounds.check(near, clientId: "c", now: now) == .accepted(near))
        let far = HybridTimestamp(milliseconds: nowMillis + 86_400_000, counter: 3, clientId: "c").description
        #expect(bounds.check(far, clientId: "c", now: now)
            == .clamped(HybridTimestamp(milliseconds: nowMillis, counter: 3, clientId: "c").description))
        // The tie-breaking client id is the uploader's, not one it chose.
        let forged = HybridTimestamp(milliseconds: nowMillis, counter: 0, clientId: "zzzz").description
        #expect(bounds.check(forged, clientId: "c", now: now)
            == .accepted(HybridTimestamp(milliseconds: nowMillis, counter: 0, clientId: "c").description))
    }
}
