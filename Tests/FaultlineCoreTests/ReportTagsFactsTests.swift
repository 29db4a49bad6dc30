import FaultlineCore
import Foundation
import Testing

/// A report's tags and SDK, kept apart from its custom keys, still reach what matched and searched them when they
/// were custom keys: fingerprint rules' `tags.KEY` and the search entry.
@Suite struct ReportTagsFactsTests {
    static var report: Report {
        var report = Report(
            eventID: EventID("0123456789abcdef0123456789abcdef")!, kind: .nonfatal,
            timestamp: Date(timeIntervalSince1970: 1_700_000_000), error: ErrorInfo(type: "E", message: "m"),
            customKeys: [("extra.note", .string("vip")), ("region", .string("from-key"))])
        report.tags = [("level", "error"), ("region", "eu-west")]
        report.sdk = SDKInfo(name: "sentry.python", version: "2.75.0")
        return report
    }

    @Test func tagsComeFirstInTheGroupingFactsThenCustomKeysThenTheSDK() {
        let (_, facts) = Grouping.groupWithFacts(Self.report, symbols: nil, fingerprints: .none)
        #expect(facts.tags.first { $0.key == "region" }?.value == "eu-west")  // the tag wins over the custom key
        #expect(facts.tags.first { $0.key == "level" }?.value == "error")
        #expect(facts.tags.first { $0.key == "extra.note" }?.value == "vip")
        #expect(facts.tags.first { $0.key == "sdk" }?.value == "sentry.python/2.75.0")
    }

    @Test func aRuleOnATagMatchesIt() throws {
        let rules = try FingerprintRules.parse(#"tags.region:eu-* -> "europe""#)
        let (result, _) = Grouping.groupWithFacts(Self.report, symbols: nil, fingerprints: rules)
        #expect(result.components == ["europe"])
    }

    @Test func theSearchEntryHoldsTagsTheSDKAndCustomKeys() {
        let keys = SearchDocument.make(Self.report, symbols: nil, grouping: nil).keys
        for line in ["level error", "region eu-west", "sdk sentry.python/2.75.0", "extra.note vip"] {
            #expect(keys.contains(line), "\(line) not in \(keys)")
        }
    }

    @Test func limitsSortAndCutTagsAndContexts() {
        var report = Self.report
        report.tags = (0..<70).reversed().map { (String(format: "t%02d", $0), String(repeating: "v", count: 2000)) }
        report.contexts = (0..<40).map { ReportContext(name: String(format: "c%02d", $0), values: [("k", "v")]) }
        IngestLimits().apply(to: &report)
        #expect(report.tags.count == 64)
        #expect(report.tags.first?.key == "t00" && report.tags.last?.key == "t63")
        #expect(report.tags.allSatisfy { $0.value.utf8.count == 1024 })
        #expect(report.trimmed.tagsDropped == 6)
        #expect(report.trimmed.valuesTruncated == 64)
        #expect(report.contexts.count == 32 && report.trimmed.contextsDropped == 8)
    }
}
