import FaultlineCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What the storage tests of both engines store (Tests/StoreConformanceTests) and the SQLite-only ones
/// (Tests/StorageTests): event ids, a payload, reports from rows, and a grouping per crash site.
public enum StoreRows {
    /// A UTC midnight the rows' times count from.
    public static let day0: Double = 86_400 * 20_400

    /// The event id of report `n`.
    public static func eventID(_ n: Int) -> EventID { EventID(String(format: "%032x", n))! }

    /// An empty deflated payload: the rows below are stored with it.
    public static let payload = StoredPayload(
        bytes: [0x78, 0x9c, 0x03, 0x00, 0x00, 0x00, 0x00, 0x01], encoding: .deflate, inflatedSize: 0)

    /// Crash reports from rows: (n, release, user, seconds after `day0`, session).
    public static func reports(_ rows: [(Int, String?, String?, Double, String?)]) -> [PreparedReport] {
        rows.map { n, release, user, offset, session in
            var r = Report(eventID: eventID(n), kind: .crash, timestamp: Date(timeIntervalSince1970: day0 + offset))
            r.app = AppInfo(version: release)
            r.userID = user
            r.sessionID = session.flatMap(SessionID.init)
            return PreparedReport(report: r, range: 0..<1)
        }
    }

    /// The grouping of a crash at `site` (one issue per site), tagged with `device`.
    public static func grouping(_ site: String, device: String = "Pixel 7") -> GroupingInput {
        GroupingInput(
            grouping: GroupingResult(
                fingerprint: Grouping.fingerprint(kind: .crash, source: .stack, components: [site]), source: .stack,
                components: [site], title: "crash in \(site)", culprit: site),
            tags: ["device": device, "os": "Android 14"])
    }
}
