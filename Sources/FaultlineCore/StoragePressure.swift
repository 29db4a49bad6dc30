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
}
