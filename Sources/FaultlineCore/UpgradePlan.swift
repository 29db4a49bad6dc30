/// What an upgrade of a database will do before it does it (`faultline migrate --check`): the pending schema steps by
/// name, each with a line saying what it changes, and an estimate of the time and the extra disk it needs, made from
/// the sizes of the tables each step touches. Pure: the engines measure, this decides.
///
/// The estimate (docs/operations.md, "Upgrading"): a step is one of three kinds of work.
/// - `schema`: a table, a column with a constant default or a trigger is added; the catalogue changes, no row is read.
///   Counted as no time and no disk.
/// - `index(table)`: an index is built over `table`, which is read once: time = the table's bytes ÷ `indexBytesPerSecond`;
///   disk = a quarter of the table's bytes (an index holds a few columns of each row; measured: 0.18).
/// - `rewrite(tables)`: every row of `tables` is copied or updated: time = their bytes ÷ `rewriteBytesPerSecond`;
///   disk = their bytes (the new rows, and the journal — SQLite's WAL, PostgreSQL's WAL and dead tuples — that holds
///   them until the step commits; measured: 0.6 to 0.9 of the table). The old pages are free again after the step, so
///   the extra disk the whole upgrade needs is the largest step's, not the sum.
/// The rates are what `tools/bench/upgrade/run` measured on the reference machine (`UpgradeRates.measured`): a slower
/// disk takes longer, so the time is an order of magnitude, not a promise.
public struct UpgradePlan: Sendable, Equatable {
    /// The work a step does, which is what its cost grows with.
    public enum Work: Sendable, Equatable {
        case schema
        case index(String)
        case rewrite([String])

        /// The tables whose size the step's cost grows with.
        public var tables: [String] {
            switch self {
            case .schema: []
            case .index(let table): [table]
            case .rewrite(let tables): tables
            }
        }
    }

    /// One pending migration: its identifier, what it does, and its estimate.
    public struct Step: Sendable, Equatable {
        public var identifier: String
        public var summary: String
        public var work: Work
        /// The bytes of the tables it reads or writes.
        public var bytes: Int64
        public var seconds: Double
        public var extraBytes: Int64
    }

    /// The schema version the database is at (its last applied migration; empty for a new database).
    public var current: String
    public var steps: [Step]
    public var databaseBytes: Int64

    /// The estimated time of all steps.
    public var seconds: Double { steps.reduce(0) { $0 + $1.seconds } }
    /// The estimated extra disk at the peak: the largest step's (each step's copy is freed when it commits).
    public var extraBytes: Int64 { steps.map(\.extraBytes).max() ?? 0 }

    /// What a database that has applied `applied` still needs, of the migrations a binary knows (`known`, oldest
    /// first, each described in `steps`): its current version (its last applied migration known here; empty for a new
    /// database) and the pending steps in order, for `make`.
    /// - Throws: `StorageError(.newerSchema)` when `applied` holds a migration `known` lacks: a newer faultline
    ///   upgraded the database, and this binary must not open it.
    public static func pending(
        known: [String], applied: some Collection<String>, steps: [String: (summary: String, work: Work)]
    ) throws -> (current: String, pending: [(identifier: String, summary: String, work: Work)]) {
        try refuseNewerSchema(applied: applied, known: known)
        let done = Set(applied)
        let pending = known.filter { !done.contains($0) }.map { id in
            let step = steps[id] ?? ("(no description)", .schema)
            return (identifier: id, summary: step.summary, work: step.work)
        }
        return (known.last(where: done.contains) ?? "", pending)
    }

    /// Refuses a database that a newer faultline migrated (both engines, at open and in `pending`): this binary does
    /// not know its schema, and writing to it could lose what the newer one stores.
    /// - Throws: `StorageError(.newerSchema)` naming the first (by name) of `applied` that `known` lacks.
    public static func refuseNewerSchema(applied: some Collection<String>, known: some Collection<String>) throws {
        let known = Set(known)
        if let unknown = applied.sorted().first(where: { !known.contains($0) }) {
            throw StorageError(
                .newerSchema,
                "the database was upgraded by a newer faultline (its migration \(unknown) is unknown here): run that "
                    + "version, or restore a backup made before the upgrade")
        }
    }

    /// The plan for `pending` (in order) given each table's size in bytes (a table not listed counts as empty).
    public static func make(
        current: String, pending: [(identifier: String, summary: String, work: Work)], tableBytes: [String: Int64],
        databaseBytes: Int64, rates: UpgradeRates = .measured
    ) -> UpgradePlan {
        let steps = pending.map { step -> Step in
            let bytes = step.work.tables.reduce(Int64(0)) { sum, table in
                let (total, overflow) = sum.addingReportingOverflow(max(0, tableBytes[table] ?? 0))
                return overflow ? Int64.max : total
            }
            switch step.work {
            case .schema:
                return Step(
                    identifier: step.identifier, summary: step.summary, work: step.work, bytes: 0, seconds: 0,
                    extraBytes: 0)
            case .index:
                return Step(
                    identifier: step.identifier, summary: step.summary, work: step.work, bytes: bytes,
                    seconds: Double(bytes) / rates.indexBytesPerSecond, extraBytes: bytes / 4)
            case .rewrite:
                return Step(
                    identifier: step.identifier, summary: step.summary, work: step.work, bytes: bytes,
                    seconds: Double(bytes) / rates.rewriteBytesPerSecond, extraBytes: bytes)
            }
        }
        return UpgradePlan(current: current, steps: steps, databaseBytes: databaseBytes)
    }

    /// The plan as an operator reads it: one line per step, then the totals.
    public var rendered: String {
        var lines = ["schema: \(current.isEmpty ? "(new database)" : current), \(Self.size(databaseBytes))"]
        if steps.isEmpty {
            lines.append("up to date: nothing to do")
            return lines.joined(separator: "\n")
        }
        lines.append("\(steps.count) step\(steps.count == 1 ? "" : "s") pending:")
        for step in steps {
            let cost: String
            switch step.work {
            case .schema: cost = "schema only"
            case .index(let table): cost = "builds an index over \(table) (\(Self.size(step.bytes)))"
            case .rewrite(let tables):
                cost = "rewrites \(tables.joined(separator: ", ")) (\(Self.size(step.bytes)))"
            }
            let time = step.work == .schema ? "" : ", ~\(Self.duration(step.seconds))"
            lines.append("  \(step.identifier): \(step.summary) — \(cost)\(time)")
        }
        lines.append(
            "estimate: ~\(Self.duration(seconds)), up to \(Self.size(extraBytes)) of extra disk at the peak "
                + "(from the tables' sizes; docs/operations.md says how)")
        lines.append("nothing was changed: `faultline serve` applies these steps when it starts")
        return lines.joined(separator: "\n")
    }

    /// `12.3 MB`, `512 KB`, `0 B` (decimal units).
    static func size(_ bytes: Int64) -> String {
        let units = ["B", "KB", "MB", "GB", "TB"]
        var value = Double(max(0, bytes))
        var unit = 0
        while value >= 1000, unit < units.count - 1 {
            value /= 1000
            unit += 1
        }
        return unit == 0 ? "\(Int(value)) B" : "\(Double(Int(value * 10)) / 10) \(units[unit])"
    }

    /// `< 1 s`, `42 s`, `3 min`, `2.5 h`.
    static func duration(_ seconds: Double) -> String {
        guard seconds.isFinite else { return "unknown" }
        if seconds < 1 { return "< 1 s" }
        if seconds < 120 { return "\(Int(seconds.rounded())) s" }
        if seconds < 7200 { return "\(Int((seconds / 60).rounded())) min" }
        return "\(Double(Int(seconds / 360)) / 10) h"
    }
}

/// The throughput an upgrade step is estimated with (`UpgradePlan`).
public struct UpgradeRates: Sendable, Equatable {
    /// Bytes of table rewritten (copied or updated, with its indexes) per second.
    public var rewriteBytesPerSecond: Double
    /// Bytes of table read into a new index per second.
    public var indexBytesPerSecond: Double

    public init(rewriteBytesPerSecond: Double, indexBytesPerSecond: Double) {
        self.rewriteBytesPerSecond = rewriteBytesPerSecond
        self.indexBytesPerSecond = indexBytesPerSecond
    }

    /// Measured by `tools/bench/upgrade/run` at 1 M reports (docs/operations.md has the figures): every report updated
    /// in one transaction, 376 MB of table in 3.4 s (110 MB/s); an index over it, 1.5 s (257 MB/s). Rounded down.
    public static let measured = UpgradeRates(rewriteBytesPerSecond: 100e6, indexBytesPerSecond: 250e6)
}
