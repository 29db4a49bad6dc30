import FaultlineCore
import Foundation
import Testing

@Suite struct IngestLimitsTests {
    func report() -> Report {
        Report(
            eventID: EventID("7077e450fa6f4594850bfed9428d1d98")!, kind: .crash,
            timestamp: Date(timeIntervalSince1970: 0))
    }

    @Test func keepsTheFirst64CustomKeysInKeyOrderAndCountsTheRest() {
        var r = report()
        r.customKeys = (0..<70).reversed().map { (String(format: "key%02d", $0), .number(Double($0))) }
        IngestLimits().apply(to: &r)
        #expect(r.customKeys.count == 64)
        #expect(r.customKeys.first?.key == "key00")
        #expect(r.customKeys.last?.key == "key63")
        #expect(r.trimmed.customKeysDropped == 6)
    }

    @Test func truncatesLongKeysAndValuesAtACharacterBoundary() {
        var r = report()
        let long = String(repeating: "é", count: 600)  // 1200 bytes
        r.customKeys = [("k", .string(long)), (String(repeating: "k", count: 2000), .bool(true))]
        IngestLimits().apply(to: &r)
        guard case .string(let kept) = r.customKeys.first(where: { $0.key == "k" })?.value else {
            Issue.record("value lost")
            return
        }
        #expect(kept.utf8.count == 1024)
        #expect(kept.allSatisfy { $0 == "é" })
        #expect(r.customKeys.contains { $0.key.utf8.count == 1024 })
        #expect(r.trimmed.valuesTruncated == 2)
    }

    @Test func dropsTheOldestBreadcrumbsPast64KB() {
        var r = report()
        r.breadcrumbs = (0..<100).map {
            Breadcrumb(timestamp: Date(timeIntervalSince1970: Double($0)), message: String(repeating: "x", count: 1000))
        }
        IngestLimits().apply(to: &r)
        let kept = r.breadcrumbs.count
        #expect(kept < 100 && kept > 50)
        #expect(r.trimmed.breadcrumbsDropped == 100 - kept)
        #expect(r.breadcrumbs.last?.timestamp == Date(timeIntervalSince1970: 99))  // newest survive
        let total = r.breadcrumbs.map(IngestLimits.approximateSize).reduce(0, +)
        #expect(total <= 64 * 1024)
    }

    @Test func truncatesUserIDAndCountsIt() {
        var r = report()
        r.userID = String(repeating: "u", count: 5000)
        IngestLimits().apply(to: &r)
        #expect(r.userID?.utf8.count == 1024)
        #expect(r.trimmed.valuesTruncated == 1)
    }

    @Test func cutsThreadsButKeepsTheCrashedOne() {
        var r = report()
        var limits = IngestLimits()
        limits.maxThreads = 4
        limits.maxFramesPerThread = 3
        r.threads = (0..<10).map {
            ThreadInfo(name: "t\($0)", crashed: $0 == 8, frames: (0..<5).map { Frame(address: UInt64($0)) })
        }
        limits.apply(to: &r)
        #expect(r.threads.count == 4)
        #expect(r.threads.contains { $0.crashed && $0.name == "t8" })
        #expect(r.trimmed.threadsDropped == 6)
        #expect(r.threads.allSatisfy { $0.frames.count == 3 })
        #expect(r.trimmed.framesDropped == 8)
    }

    @Test func aReportWithinLimitsIsUntouched() {
        var r = report()
        r.customKeys = [("a", .string("b"))]
        r.breadcrumbs = [Breadcrumb(timestamp: Date(timeIntervalSince1970: 1), message: "hi")]
        let before = r
        IngestLimits().apply(to: &r)
        #expect(r == before)
        #expect(r.trimmed.isEmpty)
    }
}
