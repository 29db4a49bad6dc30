import FaultlineCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The real wall clock; tests pass their own `WallClock`.
struct SystemClock: WallClock {
    func now() -> Date { Date() }
}
