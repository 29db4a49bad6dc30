/// A view model that names its fields for Mustache itself, so that `MustacheTree` does not build a `Mirror` for
/// it. For the rows a page repeats tens to hundreds of times (issue, alert, release and chart rows, and what they
/// hold); the `Mirror` walk was about a third of the summary pages' render time. Every field is listed, under its
/// property's name: `MustacheFieldsTests` checks each conforming type against its `Mirror`, so a field added to the
/// type but not here fails a test instead of rendering blank.
protocol MustacheFields {
    /// The fields as `(name, value)`; a nil optional may be given as it is (it is left out, like a missing key).
    var mustacheFields: [(String, Any)] { get }
}

extension IssueRowView: MustacheFields {
    var mustacheFields: [(String, Any)] {
        [
            ("issueID", issueID), ("issueHref", issueHref), ("issueTitle", issueTitle),
            ("issueCulprit", issueCulprit as Any), ("issueCode", issueCode as Any),
            ("issueKind", issueKind), ("statusBadge", statusBadge), ("signalBadges", signalBadges),
            ("totalEvents", totalEvents), ("totalUsers", totalUsers), ("firstSeen", firstSeen), ("lastSeen", lastSeen),
            ("firstRelease", firstRelease as Any), ("issueTrending", issueTrending as Any),
        ]
    }
}

extension TrendingMarkView: MustacheFields {
    var mustacheFields: [(String, Any)] {
        [("trendingShort", trendingShort), ("trendingLong", trendingLong), ("trendingSince", trendingSince)]
    }
}

extension TopIssueRowView: MustacheFields {
    var mustacheFields: [(String, Any)] {
        [
            ("rank", rank), ("issue", issue), ("windowUsers", windowUsers), ("windowEvents", windowEvents),
            ("usersTrend", usersTrend as Any),
        ]
    }
}

extension AlertView: MustacheFields {
    var mustacheFields: [(String, Any)] {
        [
            ("kindText", kindText), ("alertTitle", alertTitle), ("alertRelease", alertRelease as Any),
            ("createdAt", createdAt), ("summary", summary), ("reasonItems", reasonItems), ("hasReasons", hasReasons),
            ("issueHref", issueHref), ("issueLinked", issueLinked),
        ]
    }
}

extension AlertView.ReasonItem: MustacheFields {
    var mustacheFields: [(String, Any)] { [("reasonLabel", reasonLabel), ("reasonValue", reasonValue)] }
}

extension ReleaseRowView: MustacheFields {
    var mustacheFields: [(String, Any)] {
        [
            ("release", release), ("firstSeen", firstSeen), ("lastSeen", lastSeen), ("adoptionText", adoptionText),
            ("sessionsTotal", sessionsTotal), ("crashFreeUsersText", crashFreeUsersText),
            ("crashFreeSessionsText", crashFreeSessionsText), ("usersTarget", usersTarget),
            ("sessionsTarget", sessionsTarget), ("abnormalSessions", abnormalSessions),
            ("erroredSessions", erroredSessions), ("newIssues", newIssues),
        ]
    }
}

extension ReleaseLink: MustacheFields {
    var mustacheFields: [(String, Any)] {
        [("releaseName", releaseName), ("releaseHref", releaseHref), ("releaseLinked", releaseLinked)]
    }
}

extension TimeView: MustacheFields {
    var mustacheFields: [(String, Any)] { [("iso", iso), ("text", text)] }
}

extension Badge: MustacheFields {
    var mustacheFields: [(String, Any)] { [("badgeText", badgeText), ("badgeClass", badgeClass)] }
}

extension TrendView: MustacheFields {
    var mustacheFields: [(String, Any)] {
        [
            ("trendArrow", trendArrow), ("trendSpoken", trendSpoken), ("trendChange", trendChange),
            ("trendBefore", trendBefore), ("trendClass", trendClass),
        ]
    }
}

// The sample event's rows: a thread's frames (tens to hundreds a page), their inline entries and source lines, the
// breadcrumbs and the info tables.

extension InfoRow: MustacheFields {
    var mustacheFields: [(String, Any)] { [("infoLabel", infoLabel), ("infoValue", infoValue)] }
}

extension SampleEventView.FrameEntry: MustacheFields {
    var mustacheFields: [(String, Any)] {
        [
            ("functionName", functionName), ("fullFunctionName", fullFunctionName as Any),
            ("frameLocation", frameLocation as Any),
            ("inlined", inlined), ("source", source as Any),
        ]
    }
}

extension SampleEventView.SourceLineView: MustacheFields {
    var mustacheFields: [(String, Any)] { [("lineText", lineText), ("isFocus", isFocus)] }
}

extension SampleEventView.SourceView: MustacheFields {
    var mustacheFields: [(String, Any)] {
        [("sourceCaption", sourceCaption), ("sourceStart", sourceStart), ("sourceLines", sourceLines)]
    }
}

extension SampleEventView.FrameView: MustacheFields {
    var mustacheFields: [(String, Any)] {
        [
            ("frameNumber", frameNumber), ("entries", entries), ("frameModule", frameModule as Any),
            ("frameAddress", frameAddress as Any),
            ("frameStatus", frameStatus as Any), ("inApp", inApp), ("trust", trust as Any),
        ]
    }
}

extension SampleEventView.FrameSegment: MustacheFields {
    var mustacheFields: [(String, Any)] {
        [("folded", folded), ("foldLabel", foldLabel), ("segmentStart", segmentStart), ("frames", frames)]
    }
}

extension SampleEventView.ThreadView: MustacheFields {
    var mustacheFields: [(String, Any)] {
        [
            ("threadHeading", threadHeading), ("crashed", crashed), ("frames", frames), ("hasFrames", hasFrames),
            ("segments", segments), ("walkEnd", walkEnd as Any),
        ]
    }
}

extension FrameTrustLabel: MustacheFields {
    var mustacheFields: [(String, Any)] {
        [
            ("trustText", trustText), ("trustExplanation", trustExplanation), ("trustClass", trustClass),
            ("uncertain", uncertain),
        ]
    }
}

extension SampleEventView.BreadcrumbView: MustacheFields {
    var mustacheFields: [(String, Any)] {
        [
            ("crumbTime", crumbTime), ("crumbRelative", crumbRelative), ("crumbLevel", crumbLevel as Any),
            ("crumbCategory", crumbCategory as Any),
            ("crumbMessage", crumbMessage as Any), ("crumbData", crumbData), ("hasCrumbData", hasCrumbData),
        ]
    }
}
