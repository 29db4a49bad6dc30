/// The Wilson score interval of a proportion: where the true rate of "successes" plausibly lies, given `successes`
/// out of `trials`, at a confidence level.
///
/// Wilson's interval (E. B. Wilson, 1927) rather than the textbook "p ± z·√(p(1−p)/n)": near 0 % and 100 % — where
/// crash-free rates live — the textbook interval collapses to a point (1 crash-free session out of 1 gives 100 % ± 0)
/// and can leave 0…1, while Wilson's stays inside 0…1 and stays wide when there are few trials. That width is what
/// lets the release gate say "40 sessions are too few to condemn a release on one crash".
///
/// With p̂ = successes ÷ trials and z the standard normal quantile of `1 − (1 − confidence) ÷ 2` (two-sided):
///
///     centre = (p̂ + z²/2n) ÷ (1 + z²/n)
///     half   = z ÷ (1 + z²/n) · √(p̂(1 − p̂)/n + z²/4n²)
///
/// The interval is `centre ± half`, clamped to 0…1.
public struct WilsonInterval: Sendable, Equatable {
    /// The pessimistic end (0…1).
    public var lower: Double
    /// The optimistic end (0…1).
    public var upper: Double

    public init(lower: Double, upper: Double) {
        self.lower = lower
        self.upper = upper
    }

    /// The interval of `successes` out of `trials` at `confidence` (0.5…0.9999); nil without trials, or when the
    /// counts are not counts (negative, or more successes than trials) or the confidence is out of range.
    public init?(successes: Int, trials: Int, confidence: Double) {
        guard trials > 0, successes >= 0, successes <= trials, let z = Self.z(confidence: confidence) else {
            return nil
        }
        let n = Double(trials)
        let p = Double(successes) / n
        let z2 = z * z
        let denominator = 1 + z2 / n
        let centre = (p + z2 / (2 * n)) / denominator
        let half = z / denominator * (p * (1 - p) / n + z2 / (4 * n * n)).squareRoot()
        lower = max(0, centre - half)
        upper = min(1, centre + half)
    }

    /// The confidence levels a gate accepts: from 50 % to 99.99 %.
    public static let confidenceRange: ClosedRange<Double> = 0.5...0.9999

    /// The two-sided standard normal quantile for `confidence`: z with P(−z < Z < z) = confidence (1.959964 for
    /// 0.95); nil outside ``confidenceRange``.
    ///
    /// Found by bisection on the normal distribution function, computed from erf's Maclaurin series — plain
    /// arithmetic, so FaultlineCore needs no libm. For |x| ≤ 2.8 (z ≤ 3.9, that is 99.99 %) the series' terms stay
    /// below e^7.9 ≈ 2,700, so rounding costs under 1e-12; 80 halvings of 0…6 leave an interval far smaller still.
    public static func z(confidence: Double) -> Double? {
        guard confidence.isFinite, confidenceRange.contains(confidence) else { return nil }
        var low = 0.0
        var high = 6.0
        for _ in 0..<80 {
            let mid = (low + high) / 2
            // P(−z < Z < z) = erf(z/√2).
            if erf(mid / 2.0.squareRoot()) < confidence { low = mid } else { high = mid }
        }
        return (low + high) / 2
    }

    /// erf(x) for 0 ≤ x ≤ 4.3 by its Maclaurin series: 2/√π · Σ (−1)ⁿ x^(2n+1) / (n! (2n+1)).
    static func erf(_ x: Double) -> Double {
        var term = x  // (−1)ⁿ x^(2n+1) / n!
        var sum = x
        var n = 0
        while n < 200 {
            n += 1
            term *= -x * x / Double(n)
            let next = term / Double(2 * n + 1)
            sum += next
            if abs(next) < 1e-17 * abs(sum) { break }
        }
        return sum * 2 / Double.pi.squareRoot()
    }
}
