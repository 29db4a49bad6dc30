import FaultlineCore
import Foundation
import Testing

/// The quota rule (`QuotaPolicy`) and its windows (`QuotaWindow`), pure: the clock is the date each call is given.
@Suite struct EventQuotasTests {
    /// 2024-02-29T23:59:30Z: a leap day, 30 s before a new minute, hour, day and month.
    let leapEve: Int64 = 1_709_251_170

    func date(_ second: Int64) -> Date { Date(timeIntervalSince1970: Double(second)) }

    @Test func windowsAreFixedMinutesHoursAndCalendarMonths() {
        #expect(QuotaWindow.minute.start(of: leapEve) == 1_709_251_140)
        #expect(QuotaWindow.hour.start(of: leapEve) == 1_709_247_600)
        // February 2024 starts on 2024-02-01T00:00Z and ends on 2024-03-01T00:00Z (29 days).
        let february = QuotaWindow.month.start(of: leapEve)
        #expect(february == 1_706_745_600)
        #expect(QuotaWindow.month.end(ofWindowStartingAt: february) == 1_709_251_200)
        // December ends with the next year's January.
        let december = QuotaWindow.month.start(of: 1_735_600_000)  // 2024-12-30
        #expect(december == 1_733_011_200)
        #expect(QuotaWindow.month.end(ofWindowStartingAt: december) == 1_735_689_600)  // 2025-01-01
        // Before 1970 too, and no trap on a date no clock gives.
        #expect(QuotaWindow.minute.start(of: -1) == -60)
        #expect(QuotaWindow.month.start(of: -1) == -2_678_400)  // 1969-12-01
        #expect(QuotaWindow.second(Date(timeIntervalSince1970: .infinity)) == 0)
        #expect(QuotaWindow.second(Date(timeIntervalSince1970: -.greatestFiniteMagnitude)) < 0)
    }

    @Test func admitsUpToTheQuotaThenRefusesUntilTheWindowEnds() {
        let quotas = EventQuotas(perMinute: 10)
        var counts = QuotaCounts()
        let start = QuotaWindow.minute.start(of: leapEve)
        for _ in 0..<10 {
            #expect(QuotaPolicy.decide(quotas, counts: &counts, cost: 1, at: date(leapEve)) == .admit)
        }
        // The 11th event in the minute is refused, with the 30 s left of the minute; nothing is charged.
        #expect(
            QuotaPolicy.decide(quotas, counts: &counts, cost: 1, at: date(leapEve))
                == .refuse(window: .minute, retryAfter: 30, windowStart: start))
        #expect(counts.admitted(.minute, at: leapEve) == 10)
        // A batch of 2 does not fit where 1 would not either; at the minute's last second the wait is 1 s.
        #expect(
            QuotaPolicy.decide(quotas, counts: &counts, cost: 2, at: date(start + 59))
                == .refuse(window: .minute, retryAfter: 1, windowStart: start))
        // The next minute starts empty.
        #expect(QuotaPolicy.decide(quotas, counts: &counts, cost: 10, at: date(start + 60)) == .admit)
        #expect(counts.admitted(.minute, at: start + 60) == 10)
    }

    @Test func theSmallestFullWindowRefusesAndLargerOnesKeepCounting() {
        let quotas = EventQuotas(perMinute: 5, perHour: 8, perMonth: 100)
        var counts = QuotaCounts()
        let hour = QuotaWindow.hour.start(of: leapEve)
        let minute = hour + 600  // 23:10, three minutes in the same hour below
        #expect(QuotaPolicy.decide(quotas, counts: &counts, cost: 5, at: date(minute)) == .admit)
        if case .refuse(let window, _, _) = QuotaPolicy.decide(quotas, counts: &counts, cost: 1, at: date(minute)) {
            #expect(window == .minute)
        } else {
            Issue.record("the sixth event of the minute was admitted")
        }
        // A new minute, but the hour has room for 3 only.
        #expect(QuotaPolicy.decide(quotas, counts: &counts, cost: 3, at: date(minute + 60)) == .admit)
        #expect(
            QuotaPolicy.decide(quotas, counts: &counts, cost: 1, at: date(minute + 120))
                == .refuse(window: .hour, retryAfter: Int(hour + 3600 - minute - 120), windowStart: hour))
        // The month counted all 8; a new hour (and here a new month) admits again.
        #expect(counts.admitted(.month, at: minute) == 8)
        #expect(QuotaPolicy.decide(quotas, counts: &counts, cost: 1, at: date(hour + 3600)) == .admit)
        #expect(counts.admitted(.month, at: hour + 3600) == 1)  // March began
    }

    @Test func aMonthlyQuotaRefusesUntilTheMonthEnds() {
        var counts = QuotaCounts()
        let quotas = EventQuotas(perMonth: 1)
        #expect(QuotaPolicy.decide(quotas, counts: &counts, cost: 1, at: date(1_706_745_600)) == .admit)
        #expect(
            QuotaPolicy.decide(quotas, counts: &counts, cost: 1, at: date(1_706_745_600 + 86_400))
                == .refuse(window: .month, retryAfter: 28 * 86_400, windowStart: 1_706_745_600))
    }

    @Test func aBatchBiggerThanTheQuotaIsAdmittedIntoAnEmptyWindowOnly() {
        var counts = QuotaCounts()
        let quotas = EventQuotas(perMinute: 10)
        #expect(QuotaPolicy.decide(quotas, counts: &counts, cost: 50, at: date(leapEve)) == .admit)
        #expect(QuotaPolicy.decide(quotas, counts: &counts, cost: 1, at: date(leapEve)) != .admit)
        // A hostile cost cannot overflow the count.
        var full = QuotaCounts()
        #expect(QuotaPolicy.decide(quotas, counts: &full, cost: 1, at: date(leapEve)) == .admit)
        #expect(QuotaPolicy.decide(quotas, counts: &full, cost: .max, at: date(leapEve)) != .admit)
    }

    @Test func eachNodeEnforcesItsShareAndNoQuotaAdmitsEverything() {
        var counts = QuotaCounts()
        let quotas = EventQuotas(perMinute: 1000)
        // Two nodes: each admits 500 of the 1,000.
        #expect(QuotaPolicy.decide(quotas, counts: &counts, cost: 500, at: date(leapEve), share: 0.5) == .admit)
        #expect(QuotaPolicy.decide(quotas, counts: &counts, cost: 1, at: date(leapEve), share: 0.5) != .admit)
        // A share outside (0, 1] counts as 1.
        #expect(QuotaPolicy.decide(quotas, counts: &counts, cost: 500, at: date(leapEve), share: .nan) == .admit)
        // No quota: everything is admitted and nothing is counted.
        var none = QuotaCounts()
        #expect(QuotaPolicy.decide(EventQuotas(), counts: &none, cost: 1_000_000, at: date(leapEve)) == .admit)
        #expect(none == QuotaCounts())
    }

    @Test func onlyAClientFingerprintWithoutDefaultIsKnownFromTheRequest() {
        func report(_ fingerprint: [String]?) -> Report {
            Report(
                eventID: EventID(String(repeating: "a", count: 32))!, kind: .crash, timestamp: Date(),
                threads: [], modules: [], fingerprint: fingerprint)
        }
        #expect(QuotaCount.cheapFingerprint(report(nil)) == nil)
        #expect(QuotaCount.cheapFingerprint(report(["{{ default }}", "db"])) == nil)
        // The same fingerprint grouping gives the issue.
        let grouped = Grouping.group(report(["db-timeout"]), symbols: nil).fingerprint
        #expect(QuotaCount.cheapFingerprint(report(["db-timeout"])) == grouped)
    }

    @Test func aQuotaIsFromOneToABillion() {
        #expect(EventQuotas.problem(0) != nil)
        #expect(EventQuotas.problem(-5) != nil)
        #expect(EventQuotas.problem(1) == nil)
        #expect(EventQuotas.problem(EventQuotas.maxValue) == nil)
        #expect(EventQuotas.problem(EventQuotas.maxValue + 1) != nil)
    }
}
