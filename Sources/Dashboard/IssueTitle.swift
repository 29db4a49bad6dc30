import FaultlineCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// How an issue page shows its title and the error's message without saying the same thing twice.
///
/// A crash whose error type is a signal and whose message starts with it (`faultline-run` names a C program's
/// crash `SIGSEGV` with the message `SIGSEGV (signal 11, Segmentation fault): …`) gets the stored title
/// `SIGSEGV: SIGSEGV (signal 11, …)`. The title is kept as stored (it is what alerts say, and what an issue's
/// ranking of titles compares; the fingerprint never depends on it); the issue page, the issue lists, top issues and
/// the releases comparison show it without the repeated prefix, and the page leaves out the message under "Error"
/// when the title already says it.
enum IssueTitle {
    /// How a row (an issue list, top issues, the releases comparison) names `issue`: its title as ``display(_:)``
    /// shows it, or `Issue 12` when it has none.
    static func row(_ issue: IssueSummary) -> String {
        issue.title.isEmpty ? "Issue \(issue.id.rawValue)" : display(issue.title)
    }

    /// `title` with a leading `X: ` removed when what follows starts with `X` again; otherwise `title`.
    static func display(_ title: String) -> String {
        guard let colon = title.range(of: ": ") else { return title }
        let head = title[..<colon.lowerBound]
        let rest = title[colon.upperBound...]
        guard !head.isEmpty, rest.hasPrefix(head) else { return title }
        return String(rest)
    }

    /// `message` when it says something `title` (and the error's `type`) do not; nil when it is blank, the type
    /// itself, or contained in the title whole. A nil title keeps every message that is not the type.
    static func adds(_ message: String, to title: String?, type: String?) -> String? {
        let trimmed = trim(message)
        guard !trimmed.isEmpty, trimmed != type.map(trim) else { return nil }
        if let title, title.contains(trimmed) { return nil }
        return message
    }

    private static func trim(_ text: String) -> String {
        String(text.drop(while: \.isWhitespace).reversed().drop(while: \.isWhitespace).reversed())
    }
}

extension TimeView {
    /// The time to the second (`2026-11-22 11:48:20 UTC`): for breadcrumbs, where minutes are too coarse.
    static func toTheSecond(_ date: Date) -> TimeView {
        var view = TimeView(date)
        // `isoTime` is `YYYY-MM-DDTHH:MM:SSZ`: the same instant for people, with its seconds.
        view.text = String(view.iso.dropLast().map { $0 == "T" ? " " : $0 }) + " UTC"
        return view
    }
}
