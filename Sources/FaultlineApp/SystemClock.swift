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
