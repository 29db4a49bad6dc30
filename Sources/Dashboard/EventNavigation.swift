import FaultlineCore

/// The neighbours of one stored event among its issue's events, in the order the read API pages them (by the
/// report's cursor, newest first: `GET /api/v1/issues/{id}/reports`): read by the server for an event's page, nil
/// where there is none (the newest event has no newer one).
public struct IssueEventNeighbours: Sendable, Equatable {
    public var newest: EventID?
    public var newer: EventID?
    public var older: EventID?
    public var oldest: EventID?

    public init(newest: EventID?, newer: EventID?, older: EventID?, oldest: EventID?) {
        self.newest = newest
        self.newer = newer
        self.older = older
        self.oldest = oldest
    }
}

/// The links that step through an issue's events: newest, newer, older, oldest. A step that leads nowhere (the
/// event shown is the newest already) is shown as plain text, so the row keeps its shape and says why.
enum EventNavigation {
    struct Link {
        var navLabel: String
        /// Nil: no such event, or it is the event shown.
        var navHref: String?
        /// `prev`/`next` for the adjacent steps.
        var navRel: String?
    }

    /// The links of an event's page at `from` (`<slug>/events/<id>`), from the neighbours the server read.
    static func links(_ neighbours: IssueEventNeighbours, current: EventID, slug: ProjectSlug, from: String) -> [Link] {
        func href(_ id: EventID?) -> String? {
            guard let id, id != current else { return nil }
            return SitePaths.relative(from: from, to: SitePaths.event(slug, id))
        }
        return [
            Link(navLabel: "Newest", navHref: href(neighbours.newest), navRel: nil),
            Link(navLabel: "Newer", navHref: href(neighbours.newer), navRel: "prev"),
            Link(navLabel: "Older", navHref: href(neighbours.older), navRel: "next"),
            Link(navLabel: "Oldest", navHref: href(neighbours.oldest), navRel: nil),
        ]
    }

    /// The links of an issue's page, which shows its newest sample: that event's own page (where every other step
    /// is), and the next older sample.
    static func fromIssuePage(samples: [ReportSummary], slug: ProjectSlug, from: String) -> [Link] {
        guard let shown = samples.first else { return [] }
        var links = [
            Link(
                navLabel: "This event on its own page",
                navHref: SitePaths.relative(from: from, to: SitePaths.event(slug, shown.eventID)), navRel: nil)
        ]
        links.append(
            Link(
                navLabel: "Older",
                navHref: samples.dropFirst().first.map {
                    SitePaths.relative(from: from, to: SitePaths.event(slug, $0.eventID))
                }, navRel: "next"))
        return links
    }
}
