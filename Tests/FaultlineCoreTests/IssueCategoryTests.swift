import FaultlineCore
import Testing

/// Hangs are told apart from crashes and non-fatal errors by the error type their clients give them (issue #35).
@Suite struct IssueCategoryTests {
    @Test("the hang types of Sentry Cocoa and Android make a hang, sent as a crash or as a non-fatal")
    func hangs() {
        let titles = [
            "App Hanging: App hanging for at least 2000 ms.",
            "App Hang Fully Blocked: App hanging for 2.1 seconds and was fully blocked.",
            "App Hang Non Fully Blocked: App hanging for 2.1 seconds.",
            "Fatal App Hang Fully Blocked: The user or the OS watchdog terminated your app while it blocked the main thread",
            "Fatal App Hang Non Fully Blocked",
            "ApplicationNotResponding: Application Not Responding for at least 5000 ms.",
            "ApplicationNotResponding Background ANR",
        ]
        for title in titles {
            #expect(IssueCategory.of(kind: .nonfatal, title: title) == .hang, "\(title)")
            #expect(IssueCategory.of(kind: .crash, title: title) == .hang, "\(title)")
        }
    }

    @Test("anything else keeps its stored kind, also a title that only mentions a hang")
    func others() {
        #expect(IssueCategory.of(kind: .crash, title: "SIGSEGV: boom") == .crash)
        #expect(IssueCategory.of(kind: .nonfatal, title: "NSURLErrorDomain: The request timed out.") == .nonFatal)
        #expect(IssueCategory.of(kind: .nonfatal, title: "Error: App Hanging: in a message") == .nonFatal)
        #expect(IssueCategory.of(kind: .crash, title: "App HangingX: not the type") == .crash)
        #expect(IssueCategory.of(kind: .crash, title: "") == .crash)
        #expect(IssueCategory.allCases.map(\.heading) == ["Crashes", "Hangs and ANRs", "Non-fatal errors"])
    }
}
