/// How a counted row's counters moving from `before` to `after` change the counts kept above it: the rule both
/// engines' "distinct users" rollups follow (a user appears when their count leaves 0, repeats when it passes 1).
public enum CounterDeltas {
    /// +1 when `after` is above `threshold` and `before` was not, -1 for the way back, else 0.
    public static func crossing<T: BinaryInteger>(_ threshold: T, before: T, after: T) -> T {
        (after > threshold ? 1 : 0) - (before > threshold ? 1 : 0)
    }

    /// For a row whose first counter says whether it exists: the change of "exists", and of "exists with the second
    /// counter above 0" (0 when there is only one counter).
    public static func row<T: BinaryInteger>(before: [T], after: [T]) -> (exists: T, flagged: T) {
        let exists = crossing(0, before: before[0], after: after[0])
        guard before.count > 1, after.count > 1 else { return (exists, 0) }
        let flagged: T = (after[0] > 0 && after[1] > 0 ? 1 : 0) - (before[0] > 0 && before[1] > 0 ? 1 : 0)
        return (exists, flagged)
    }
}
