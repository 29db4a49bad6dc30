/// The three kinds an issue list keeps apart, as Crashlytics does: fatal crashes, hangs (Apple's app hangs and
/// Android's ANRs) and non-fatal errors.
///
/// A stored issue has one of two kinds (``ReportKind``: crash or non-fatal, as the client sent it). Hangs are told
/// apart by the error type the clients give them, which opens the issue's title (`type: message`):
/// - Sentry Cocoa: `App Hanging`, and from 8.40 on `App Hang Fully Blocked`, `App Hang Non Fully Blocked`, and for a
///   hang the app did not survive `Fatal App Hang Fully Blocked` / `Fatal App Hang Non Fully Blocked`;
/// - Sentry Android: `ApplicationNotResponding` (mechanism `ANR`, or `AppExitInfo` for an ANR read from the system's
///   exit reasons on the next start).
///
/// A hang is a hang whether it came as a crash or as a non-fatal: the category is for reading lists, while crash-free
/// rates count sessions, not categories.
public enum IssueCategory: String, Sendable, CaseIterable {
    case crash
    case hang
    case nonFatal = "non-fatal"

    /// The error types that name a hang (compared exactly, as the SDKs spell them).
    static let hangTypes: Set<String> = [
        "App Hanging", "App Hang Fully Blocked", "App Hang Non Fully Blocked", "Fatal App Hang Fully Blocked",
        "Fatal App Hang Non Fully Blocked", "ApplicationNotResponding",
    ]

    /// The category of an issue of `kind` titled `title`.
    public static func of(kind: ReportKind, title: String) -> IssueCategory {
        // The title is the type alone, `type: message`, or the message alone when it already starts with the type.
        let hang = hangTypes.contains { type in
            guard title.hasPrefix(type) else { return false }
            let next = title.dropFirst(type.count).first
            return next == nil || next == ":" || next == " "
        }
        if hang { return .hang }
        return kind == .crash ? .crash : .nonFatal
    }

    /// The category of `issue`.
    public static func of(_ issue: IssueSummary) -> IssueCategory { of(kind: issue.kind, title: issue.title) }

    /// The heading of a list's section of this category.
    public var heading: String {
        switch self {
        case .crash: "Crashes"
        case .hang: "Hangs and ANRs"
        case .nonFatal: "Non-fatal errors"
        }
    }
}
