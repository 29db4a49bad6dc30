/// The three kinds the dashboard and the API keep apart, as Crashlytics does: fatal crashes, hangs (Apple's app hangs
/// and Android's ANRs) and non-fatal errors. Top issues rank by users affected within one category.
///
/// An issue's category is decided once, when filing creates the issue (or migrates it to a new grouping version), from
/// its first report (``of(_:)``), and stored with it (`issues.hang`, decision record 0079): the kind (``ReportKind``:
/// crash or non-fatal, as the client sent it) says the rest. Readers take the stored mark
/// (``IssueSummary/category``); nothing re-derives it from titles. A hang is a hang whether it came as a crash or as
/// a non-fatal: the category is for reading lists, while crash-free rates count sessions, not categories.
///
/// A report is a hang when the client's error type names one (compared exactly, as the SDKs spell them):
/// - Sentry Cocoa: `App Hanging`, and from 8.40 on `App Hang Fully Blocked`, `App Hang Non Fully Blocked`, and for a
///   hang the app did not survive `Fatal App Hang Fully Blocked` / `Fatal App Hang Non Fully Blocked`;
/// - Sentry Android: `ApplicationNotResponding`.
///
/// or, when the report has no error type, when the exception's Sentry mechanism is a hang tracker's: `AppHang` (Cocoa),
/// `ANR` (Android's watchdog), `AppExitInfo` (an Android ANR read from the system's exit reasons on the next start).
/// A named type wins over the mechanism: an app's own `TimeoutError` stays what it is.
public enum IssueCategory: String, Sendable, CaseIterable {
    case crash
    case hang
    case nonFatal = "non-fatal"

    /// The error types that name a hang (compared exactly, as the SDKs spell them). The issues filed before the mark
    /// was stored were marked from their titles with these types (migrations `v39-issue-hangs` / `pg24-issue-hangs`):
    /// a type added here later marks new issues; marking older ones of it takes a migration of its own.
    public static let hangTypes: Set<String> = [
        "App Hanging", "App Hang Fully Blocked", "App Hang Non Fully Blocked", "Fatal App Hang Fully Blocked",
        "Fatal App Hang Non Fully Blocked", "ApplicationNotResponding",
    ]

    /// The Sentry mechanisms (`exception.mechanism.type`) of the SDKs' hang trackers.
    public static let hangMechanisms: Set<String> = ["AppHang", "ANR", "AppExitInfo"]

    /// The tag a Sentry event's mechanism is kept under (`Report.tags`, written by the Sentry boundary first, so an
    /// event's own tag of that name never replaces it).
    public static let mechanismTag = "mechanism"

    /// Whether a report whose error type is `errorType` and whose exception's mechanism is `mechanism` is a hang.
    public static func isHang(errorType: String?, mechanism: String?) -> Bool {
        if let type = errorType, !type.isEmpty { return hangTypes.contains(type) }
        guard let mechanism else { return false }
        return hangMechanisms.contains(mechanism)
    }

    /// Whether `report` is a hang: the filing decision, taken from its first report when an issue is created.
    public static func isHang(_ report: Report) -> Bool {
        isHang(
            errorType: report.error?.type,
            mechanism: report.tags.first { $0.key == mechanismTag }?.value)
    }

    /// The category of a report (or of the issue it creates).
    public static func of(_ report: Report) -> IssueCategory { of(kind: report.kind, hang: isHang(report)) }

    /// The category of an issue of `kind` stored with the hang mark `hang`.
    public static func of(kind: ReportKind, hang: Bool) -> IssueCategory {
        if hang { return .hang }
        return kind == .crash ? .crash : .nonFatal
    }

    /// The category of `issue`, as stored.
    public static func of(_ issue: IssueSummary) -> IssueCategory { issue.category }

    /// The heading of a list's section of this category.
    public var heading: String {
        switch self {
        case .crash: "Crashes"
        case .hang: "Hangs and ANRs"
        case .nonFatal: "Non-fatal errors"
        }
    }

    /// The plural a caption names this category's issues by ("Top hangs and ANRs, …").
    public var noun: String {
        switch self {
        case .crash: "crashes"
        case .hang: "hangs and ANRs"
        case .nonFatal: "non-fatal errors"
        }
    }

    // MARK: Issues filed before the mark was stored

    /// Whether an issue filed before the hang mark was stored (migration `v39-issue-hangs` / `pg24-issue-hangs`) is a
    /// hang, from its title: the title opens with the error type (`type: message`, the type alone, or a message that
    /// already starts with the type), so a title that opens with a hang type followed by nothing, `:` or a space was
    /// a hang's.
    public static func isHang(title: String) -> Bool {
        hangTypes.contains { type in
            guard title.hasPrefix(type) else { return false }
            let next = title.dropFirst(type.count).first
            return next == nil || next == ":" || next == " "
        }
    }

    /// ``isHang(title:)`` as an SQL condition on the text column `column`, for the migrations' backfill on both
    /// engines (`substr` counts characters on both; the types are ASCII without quotes).
    public static func hangTitleCondition(_ column: String) -> String {
        let terms = hangTypes.sorted().map { type in
            "\(column) = '\(type)' OR substr(\(column), 1, \(type.count + 1)) IN ('\(type):', '\(type) ')"
        }
        return "(" + terms.joined(separator: " OR ") + ")"
    }
}
