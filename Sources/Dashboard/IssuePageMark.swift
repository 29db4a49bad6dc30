import FaultlineCore

/// The comment an issue page ends with: the renderer that made it (``SiteRenderer/stamp``) and the issue version
/// it was rendered from, so that a server started again over the same site folder knows which pages are current
/// without rendering them (its ``IssuePageLedger`` starts empty). The page file itself carries what it was made
/// from, so the two can never disagree: a crash between writing a page and recording it loses nothing, and every
/// node sharing a site folder reads the same answer.
///
/// `<!-- faultline-page 1 <stamp> v <changedAt> <events> <noteBytes> <status> -->` for an issue's page,
/// `<!-- faultline-page 1 <stamp> gone -->` for the "no longer exists" page. A page without a mark (or with one
/// that does not parse, or of another renderer) is not current.
struct IssuePageMark: Equatable {
    var stamp: String
    var entry: IssuePageLedger.Entry

    static let opening = "<!-- faultline-page 1 "
    static let closing = " -->"
    /// How many bytes at a page's end hold its mark, at most (the longest mark is ~130 bytes).
    static let tailBytes = 192

    /// The mark as the page's last line; nil when the version has a status a comment cannot carry as one word
    /// (only lowercase letters, digits and `_`: every status the server stores), so such a page is rendered whenever asked.
    var text: String? {
        guard stamp.utf8.allSatisfy(Self.isWordByte) else { return nil }
        switch entry {
        case .gone:
            return "\n" + Self.opening + stamp + " gone" + Self.closing + "\n"
        case .page(let v):
            guard !v.status.isEmpty, v.status.utf8.allSatisfy(Self.isWordByte) else { return nil }
            return "\n" + Self.opening + stamp + " v \(v.changedAt) \(v.events) \(v.noteBytes) \(v.status)"
                + Self.closing + "\n"
        }
    }

    init(stamp: String, entry: IssuePageLedger.Entry) {
        self.stamp = stamp
        self.entry = entry
    }

    /// The mark in the last bytes of a page file (hostile in principle: whatever is there is parsed without trapping).
    init?(tail: [UInt8]) {
        let opening = Array(Self.opening.utf8)
        let closing = Array(Self.closing.utf8)
        guard tail.count >= opening.count + closing.count,
            let start = (0...(tail.count - opening.count)).last(where: {
                tail[$0..<$0 + opening.count].elementsEqual(opening)
            })
        else { return nil }
        let from = start + opening.count
        guard from + closing.count <= tail.count,
            let end = (from...(tail.count - closing.count)).first(where: {
                tail[$0..<$0 + closing.count].elementsEqual(closing)
            })
        else { return nil }
        let text = String(decoding: tail[from..<end], as: UTF8.self)
        let fields = text.split(separator: " ", omittingEmptySubsequences: false)
        guard let stamp = fields.first, !stamp.isEmpty, stamp.utf8.allSatisfy(Self.isWordByte) else { return nil }
        switch fields.count {
        case 2 where fields[1] == "gone":
            self.init(stamp: String(stamp), entry: .gone)
        case 6 where fields[1] == "v":
            guard let changedAt = Int64(fields[2]), let events = Int64(fields[3]), let note = Int64(fields[4]),
                !fields[5].isEmpty, fields[5].utf8.allSatisfy(Self.isWordByte)
            else { return nil }
            self.init(
                stamp: String(stamp),
                entry: .page(
                    IssueVersion(changedAt: changedAt, events: events, status: String(fields[5]), noteBytes: note)))
        default:
            return nil
        }
    }

    private static func isWordByte(_ byte: UInt8) -> Bool {
        (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z"))
            || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9"))
            || byte == UInt8(ascii: "_")
    }
}
