/// Where a batched rewrite stands, the same on both engines (`SQLiteBatchedRewrites`, `PostgresBatchedRewrites`):
/// each engine keeps it in its `batched_rewrites` row, runs a batch in a transaction that also stores the cursor, and
/// asks this what comes next. Pure: the engines read and write, this decides the bounds, the budget and the progress.
///
/// A rewrite walks its table by id, from before the first to `end`, the largest id when it started (rows added later
/// are written by the new code and need no rewrite). A batch covers `after < id <= through`, where `through` is the
/// `batchRows`-th id after the cursor; each is applied once because the cursor commits with it.
public struct BatchedRewriteCursor: Sendable, Equatable {
    public let migration: String
    /// The last id rewritten (`Int64.min` before the first batch).
    public private(set) var last: Int64
    /// The id the rewrite ends at (`Int64.min` for a table that was empty).
    public let end: Int64
    /// Rows rewritten so far, this run and earlier interrupted ones.
    public private(set) var rows: Int64
    /// Rows the rewrite covers (the table's rows when it started).
    public let total: Int64
    /// Whether this run continues an interrupted one.
    public let resumed: Bool
    public private(set) var finished: Bool

    /// A rewrite that has not started: the table's largest id (nil: it is empty) and its rows.
    public init(migration: String, end: Int64?, total: Int64) {
        (self.migration, last, self.end, rows, self.total) = (migration, .min, end ?? .min, 0, total)
        (resumed, finished) = (false, false)
    }

    /// The cursor stored by an earlier run (interrupted, or finished).
    public init(migration: String, last: Int64, end: Int64, rows: Int64, total: Int64, finished: Bool) {
        (self.migration, self.last, self.end, self.rows, self.total) = (migration, last, end, rows, total)
        (resumed, self.finished) = (true, finished)
    }

    /// Whether a batch is left to do.
    public var hasBatch: Bool { !finished && last < end }

    /// A batch's upper bound (inclusive): `nth`, the `batchRows`-th id after the cursor as the table gives it, or the
    /// end when fewer rows are left.
    public func through(nth: Int64?) -> Int64 { min(nth ?? end, end) }

    /// Moves past a committed batch of `count` rows that ended at `through`.
    /// - Returns: the progress to report.
    public mutating func advance(through: Int64, count: Int64) -> BatchedRewriteProgress {
        last = through
        rows = rows.addingReportingOverflow(max(0, count)).overflow ? .max : rows + max(0, count)
        return progress(batch: count)
    }

    /// Marks the rewrite finished (its row is updated in the same breath).
    /// - Returns: the last progress.
    public mutating func finish() -> BatchedRewriteProgress {
        finished = true
        return progress(batch: 0)
    }

    func progress(batch: Int64) -> BatchedRewriteProgress {
        BatchedRewriteProgress(
            migration: migration, rows: rows, batch: batch, total: total, resumed: resumed, finished: finished)
    }

    /// Spends one batch of `budget` (nil: no limit), as a run stopped part-way does (tests, the benchmark).
    /// - Returns: false when none is left: the run stops as a kill would.
    public static func spend(_ budget: inout Int?) -> Bool {
        guard let left = budget else { return true }
        guard left > 0 else { return false }
        budget = left - 1
        return true
    }
}

/// Where a batched rewrite stands (reported after each batch).
public struct BatchedRewriteProgress: Sendable, Equatable {
    public var migration: String
    /// Rows rewritten so far, this run and earlier interrupted ones.
    public var rows: Int64
    /// Rows of the last batch.
    public var batch: Int64
    /// Rows the rewrite covers (the table's rows when it started).
    public var total: Int64
    /// Whether this run continued an interrupted one.
    public var resumed: Bool
    public var finished: Bool

    public init(migration: String, rows: Int64, batch: Int64, total: Int64, resumed: Bool, finished: Bool) {
        self.migration = migration
        self.rows = rows
        self.batch = batch
        self.total = total
        self.resumed = resumed
        self.finished = finished
    }

    /// Whether this batch crossed a tenth of the way (or finished): when a progress line is worth printing.
    public var crossesATenth: Bool {
        let step = max(1, total / 10)
        return finished || rows / step != (rows - batch) / step
    }

    /// The progress line both engines print at each tenth (standard error, the server's log):
    /// `upgrade: v32-…: 400000/1000000 rows (40 %)`, with `, resumed` and `, done` when they apply.
    public var line: String {
        let (scaled, overflow) = rows.multipliedReportingOverflow(by: 100)
        let percent = total <= 0 || overflow ? 100 : min(100, scaled / total)
        return "upgrade: \(migration): \(rows)/\(total) rows (\(percent) %)" + (resumed ? ", resumed" : "")
            + (finished ? ", done" : "")
    }
}
