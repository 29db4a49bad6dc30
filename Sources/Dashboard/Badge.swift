import FaultlineCore

/// A small label with text (never colour alone): an issue's status or one of its signals.
struct Badge {
    var badgeText: String
    var badgeClass: String

    static func status(_ status: IssueStatus) -> Badge {
        Badge(badgeText: status.rawValue, badgeClass: "badge badge-\(status.rawValue)")
    }

    static func signals(_ signals: IssueSignals) -> [Badge] {
        signals.names.map { Badge(badgeText: $0, badgeClass: "badge badge-\($0)") }
    }
}
