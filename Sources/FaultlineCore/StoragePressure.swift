#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// When the server is under storage pressure (a full disk) and when it leaves it: pure decisions only.
///
/// The state is entered when the measured free space drops below `floorBytes`, or when a write met a real
/// "disk full" (SQLITE_FULL, ENOSPC). It is left only once free space is back above `floorBytes + marginBytes`,
/// so that a disk hovering around the floor does not flap in and out (and log) on every request.
public struct StoragePressurePolicy: Sendable, Equatable {
    /// Free bytes below which ingest is refused (0: only a real disk-full error enters the state).
    public var floorBytes: UInt64
    /// Free bytes above the floor needed before the state is left.
    public var marginBytes: UInt64

    public init(floorBytes: UInt64, marginBytes: UInt64) {
        self.floorBytes = floorBytes
        self.marginBytes = marginBytes
    }

    /// The default margin: a quarter of the floor, at least 4 MiB.
    public static func defaultMargin(floorBytes: UInt64) -> UInt64 {
        max(4 << 20, floorBytes / 4)
    }

    /// Whether the server is under pressure after measuring `available` free bytes (nil: the measurement
    /// failed, the state stays what it was).
    public func isFull(wasFull: Bool, available: UInt64?) -> Bool {
        guard let available else { return wasFull }
        if wasFull {
            let (leave, overflow) = floorBytes.addingReportingOverflow(marginBytes)
            return overflow || available <= leave
        }
        return floorBytes > 0 && available < floorBytes
    }

    /// How long a measurement of `available` free bytes may be reused: a second while far from the floor, not at
    /// all (measure on every request) when within 64 MiB of it or under pressure, so that a burst of ingest cannot
    /// write past the floor on a stale measurement (a `statvfs` costs about a microsecond).
    public func measurementLifetime(available: UInt64?, full: Bool) -> Double {
        guard !full, let available else { return 0 }
        let (near, overflow) = floorBytes.addingReportingOverflow(64 << 20)
        return overflow || available <= near ? 0 : 1
    }

    /// Free bytes background writers keep for themselves below the floor: they may go on down to half the floor
    /// (so the work on what was accepted before ingest was refused completes) and pause below it, so the file
    /// system never reaches 100 % from the server's own writes. Ingest is refused at `floorBytes`; the half below it
    /// is the background writers' share.
    public var backgroundReserveBytes: UInt64 { floorBytes / 2 }

    /// Whether background writers (symbolication, grouping, rendering, alerts, webhooks) must pause now: only under
    /// pressure, and then when a real disk-full error was met (`hardFull`: nothing can be written, whatever the
    /// measure says), when free space is unknown, or below `backgroundReserveBytes`.
    public func backgroundPaused(full: Bool, hardFull: Bool, available: UInt64?) -> Bool {
        guard full else { return false }
        if hardFull { return true }
        guard let available else { return true }
        return available < backgroundReserveBytes
    }
}

/// The alert the server records, for every project with a webhook, when it enters (`storage_full`) or leaves
/// (`storage_ok`) the storage-pressure state: pure text and numbers.
public enum StorageAlerts {
    /// The draft for one change of the state at `date`; the dedupe key names the change, so the same entry is
    /// recorded once however often the writer retries, and each new entry is a new alert.
    public static func draft(project: ProjectID, full: Bool, at date: Date, availableBytes: UInt64?, floorBytes: UInt64)
        -> AlertDraft
    {
        var reason: [String: Double] = ["floor_mib": mebibytes(floorBytes)]
        if let availableBytes { reason["free_mib"] = mebibytes(availableBytes) }
        return AlertDraft(
            project: project, kind: full ? .storageFull : .storageOK,
            dedupeKey: "\(full ? "storage_full" : "storage_ok"):\(millis(date))", issue: nil, release: nil,
            title: full
                ? "The server's disk is full: ingest answers 507" : "The server's disk has space again: ingest resumed",
            reason: reason)
    }

    /// Bytes as MiB with one decimal.
    static func mebibytes(_ bytes: UInt64) -> Double {
        (Double(bytes) / 1_048_576 * 10).rounded(.down) / 10
    }

    /// Whole milliseconds since 1970, without trapping on any date.
    static func millis(_ date: Date) -> Int64 {
        let ms = (date.timeIntervalSince1970 * 1000).rounded(.down)
        return Int64(exactly: ms) ?? 0  // nil for NaN, infinities and dates beyond ±292 million years
    }
}
