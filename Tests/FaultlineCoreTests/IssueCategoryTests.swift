import FaultlineCore
import Foundation
import Testing

/// Hangs are told apart from crashes and non-fatal errors when filing creates their issue, by the error type their
/// clients give them, else by the Sentry mechanism of a hang tracker (issue #35).
@Suite struct IssueCategoryTests {
    static let hangTypes = [
        "App Hanging", "App Hang Fully Blocked", "App Hang Non Fully Blocked", "Fatal App Hang Fully Blocked",
        "Fatal App Hang Non Fully Blocked", "ApplicationNotResponding",
    ]

    /// A Sentry-like report of `kind` with the error type `type` and the mechanism tag `mechanism`.
    static func report(_ kind: ReportKind, type: String?, mechanism: String? = nil, message: String = "m") -> Report {
        var report = Report(
            eventID: EventID("0123456789abcdef0123456789abcdef")!, kind: kind,
            timestamp: Date(timeIntervalSince1970: 1))
        report.error = ErrorInfo(type: type, message: message)
        if let mechanism { report.tags = [("level", "error"), ("mechanism", mechanism)] }
        return report
    }

    @Test("the hang types of Sentry Cocoa and Android make a hang, sent as a crash or as a non-fatal")
    func hangTypes() {
        #expect(IssueCategory.hangTypes == Set(Self.hangTypes))
        for type in Self.hangTypes {
            #expect(IssueCategory.of(Self.report(.nonfatal, type: type)) == .hang, "\(type)")
            #expect(IssueCategory.of(Self.report(.crash, type: type, mechanism: "AppHang")) == .hang, "\(type)")
        }
    }

    @Test("without an error type, a hang tracker's mechanism makes a hang; a named type wins over the mechanism")
    func mechanisms() {
        for mechanism in ["AppHang", "ANR", "AppExitInfo"] {
            #expect(IssueCategory.of(Self.report(.crash, type: nil, mechanism: mechanism)) == .hang, "\(mechanism)")
            #expect(IssueCategory.of(Self.report(.nonfatal, type: "", mechanism: mechanism)) == .hang, "\(mechanism)")
        }
        #expect(IssueCategory.of(Self.report(.nonfatal, type: "TimeoutError", mechanism: "ANR")) == .nonFatal)
        #expect(IssueCategory.of(Self.report(.crash, type: nil, mechanism: "signalhandler")) == .crash)
        #expect(IssueCategory.of(Self.report(.crash, type: nil, mechanism: "anr")) == .crash, "compared exactly")
    }

    @Test("anything else keeps its kind: a crash, a non-fatal, a type that only resembles a hang's")
    func others() {
        #expect(IssueCategory.of(Self.report(.crash, type: "SIGSEGV")) == .crash)
        #expect(IssueCategory.of(Self.report(.nonfatal, type: "NSURLErrorDomain")) == .nonFatal)
        #expect(IssueCategory.of(Self.report(.nonfatal, type: "App Hanging Detector")) == .nonFatal)
        #expect(IssueCategory.of(Self.report(.crash, type: "app hanging")) == .crash)
        #expect(IssueCategory.of(Self.report(.nonfatal, type: nil, message: "App Hanging: in a message")) == .nonFatal)
        #expect(IssueCategory.of(kind: .crash, hang: false) == .crash)
        #expect(IssueCategory.of(kind: .nonfatal, hang: true) == .hang)
        #expect(IssueCategory.allCases.map(\.heading) == ["Crashes", "Hangs and ANRs", "Non-fatal errors"])
    }

    @Test("an issue filed before the mark is a hang by its title, which opens with the error type")
    func titles() {
        let hangs = [
            "App Hanging: App hanging for at least 2000 ms.",
            "App Hang Fully Blocked: App hanging for 2.1 seconds and was fully blocked.",
            "Fatal App Hang Non Fully Blocked",
            "ApplicationNotResponding: Application Not Responding for at least 5000 ms.",
            "ApplicationNotResponding Background ANR",
        ]
        for title in hangs { #expect(IssueCategory.isHang(title: title), "\(title)") }
        for title in ["SIGSEGV: boom", "Error: App Hanging: in a message", "App HangingX: not the type", ""] {
            #expect(!IssueCategory.isHang(title: title), "\(title)")
        }
        // The migrations' condition says the same (checked on both engines by the migration tests).
        let condition = IssueCategory.hangTitleCondition("title")
        #expect(condition.contains("title = 'App Hanging' OR substr(title, 1, 12) IN ('App Hanging:', 'App Hanging ')"))
    }
}
