/// How many sample events retention keeps past `--retention-days`, so that an old issue's page is never empty.
///
/// Each issue keeps its first report, its latest and the first report of each release (newest release first) up to
/// `perIssue`; a project keeps at most `perProject` samples in all, so their space is bounded (each sample keeps its
/// request body, at most the body limit, and its attachments). Counts, users and crash-free history are rollups
/// counted on arrival: keeping or deleting reports never changes them.
public struct RetentionSamplePolicy: Sendable, Equatable {
    /// Most samples one issue keeps (0: none, plain retention).
    public var perIssue: Int
    /// Most samples one project keeps in all its issues (0: none).
    public var perProject: Int

    /// The bounds the flags accept: a cap past them is surely a typo, and the per-project count is read back in one query.
    public static let maxPerIssue = 1_000
    public static let maxPerProject = 1_000_000

    /// 8 samples an issue (its first, its latest and 6 releases'), at most 2 000 a project.
    public init(perIssue: Int = 8, perProject: Int = 2_000) {
        self.perIssue = min(max(0, perIssue), Self.maxPerIssue)
        self.perProject = min(max(0, perProject), Self.maxPerProject)
    }

    /// No samples: everything past the retention period goes.
    public static let none = RetentionSamplePolicy(perIssue: 0, perProject: 0)

    /// Whether retention keeps samples at all.
    public var keepsSamples: Bool { perIssue > 0 && perProject > 0 }
}

/// An issue's stored reports of one release: the lowest and the highest report id (ids grow with arrival, so these
/// are the first and the latest).
public struct ReleaseSpan: Sendable, Equatable {
    public var release: String?
    public var first: Int64
    public var latest: Int64
    public init(release: String?, first: Int64, latest: Int64) {
        self.release = release
        self.first = first
        self.latest = latest
    }
}

/// Why a report is kept: stored with it (1, 2), so that a full project gives up release samples before anchors.
public enum SampleTier: Int, Sendable, Equatable, Comparable {
    /// The issue's first or latest report: what its page shows first.
    case anchor = 1
    /// The first report of one of the issue's releases.
    case release = 2

    public static func < (lhs: SampleTier, rhs: SampleTier) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// One report retention keeps, and why.
public struct SamplePick: Sendable, Equatable, Hashable {
    public var report: Int64
    public var tier: SampleTier
    public init(report: Int64, tier: SampleTier) {
        self.report = report
        self.tier = tier
    }
}

/// The choice of samples: pure, so both engines keep the same reports and the rule is tested without SQL.
public enum RetentionSamples {
    /// The samples one issue keeps, most important first: its first report, its latest, then the first report of each
    /// release, the release seen last first; at most `limit`, each report once.
    public static func choose(_ spans: [ReleaseSpan], limit: Int) -> [SamplePick] {
        guard limit > 0, let first = spans.map(\.first).min(), let latest = spans.map(\.latest).max() else {
            return []
        }
        var picks = [SamplePick(report: first, tier: .anchor)]
        if latest != first { picks.append(SamplePick(report: latest, tier: .anchor)) }
        let releases = spans.sorted { ($0.latest, $0.first) > ($1.latest, $1.first) }
        for span in releases where !picks.contains(where: { $0.report == span.first }) {
            picks.append(SamplePick(report: span.first, tier: .release))
        }
        return Array(picks.prefix(limit))
    }

    /// What a project admits of the samples its issues want, under its cap.
    public struct Admission: Sendable, Equatable {
        /// The samples to mark (the issues' own earlier samples are cleared first).
        public var kept: [SamplePick]
        /// How many release samples of the project's other issues (oldest first) give up their place to anchors.
        public var evicted: Int
    }

    /// Admits `wanted` (each issue's `choose`, in issue order) into `room` free places: every issue's anchors first,
    /// then release samples; when the room runs out, an anchor takes the place of one of `evictable` release samples
    /// of other issues, so an old issue's page keeps its first and latest events while the cap holds.
    public static func admit(_ wanted: [[SamplePick]], room: Int, evictable: Int) -> Admission {
        var room = max(0, room)
        var evictable = max(0, evictable)
        var admission = Admission(kept: [], evicted: 0)
        for tier in [SampleTier.anchor, .release] {
            for picks in wanted {
                for pick in picks where pick.tier == tier {
                    if room > 0 {
                        room -= 1
                    } else if tier == .anchor, evictable > 0 {
                        evictable -= 1
                        admission.evicted += 1
                    } else {
                        continue
                    }
                    admission.kept.append(pick)
                }
            }
        }
        return admission
    }
}
