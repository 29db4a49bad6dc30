import FaultlineCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The real wall clock; tests pass their own `WallClock`.
public struct SystemClock: WallClock {
    public init() {}
    public func now() -> Date { Date() }
}

/// The system clock moved by `offset` seconds: what a debug server uses under `FAULTLINE_TEST_CLOCK_OFFSET_S`, so
/// that an end-to-end test can store reports "days ago".
public struct OffsetClock: WallClock {
    let offset: Double
    public init(offset: Double) { self.offset = offset }
    public func now() -> Date { Date().addingTimeInterval(offset) }
}
