import FaultlineCore
import PostgresNIO

/// The weekly partitions of the tables that grow with time (`PostgresPartitions.tables`), by
/// `received_at`: the server's own clock, so the weeks that receive rows are known in advance.
///
/// `ensure` creates the partitions of the week before `now` to `weeksAhead` weeks after it (at start and then from
/// the maintenance pass), so rows never wait for DDL on the ingest path. A row outside every partition (a clock set
/// far off) goes to the table's DEFAULT partition instead of failing. Retention drops the partitions that end
/// before its cutoff (`PostgresRetention`), which gives their space back to the file system at once.
enum PostgresPartitions {
    /// The partitioned tables: a report's payload, row, result and modules live in the same week.
    static let tables = [
        "payloads", "reports", "attachments", "report_symbols", "report_modules", "search_documents",
    ]
    static let dayMillis: Int64 = 86_400_000
    static let weekMillis: Int64 = 7 * dayMillis
    static let weeksAhead = 2

    /// The start of the week (Monday 00:00 UTC) holding `ms`. Day 0 (1970-01-01) was a Thursday. Times are clamped
    /// to ±9·10¹⁵ ms (as `Millis.from` clamps them), so no value traps.
    static func weekStart(_ ms: Int64) -> Int64 {
        let mondayOffset = 3 * dayMillis
        let shifted = min(max(ms, -9_000_000_000_000_000), 9_000_000_000_000_000) + mondayOffset
        let weeks = shifted >= 0 ? shifted / weekMillis : (shifted + 1) / weekMillis - 1
        return weeks * weekMillis - mondayOffset
    }

    /// `reports_2026_11_23`: the table and the week's first day.
    static func name(_ table: String, week start: Int64) -> String {
        let day = DayNumber(rawValue: Int(start / dayMillis))
        return table + "_" + String(day.description.map { $0 == "-" ? "_" : $0 })
    }

    /// The week starts of the partitions `ensure` keeps around `now`.
    static func weeks(around now: Int64) -> [Int64] {
        let current = weekStart(now)
        return (-1...weeksAhead).map { current + Int64($0) * weekMillis }
    }

    /// The statement that makes `table`'s partition of the week starting at `week` when it is missing.
    static func createStatement(_ table: String, week: Int64) -> String {
        """
        CREATE TABLE IF NOT EXISTS \(name(table, week: week)) PARTITION OF \(table)
        FOR VALUES FROM (\(week)) TO (\(week + weekMillis))
        """
    }

    /// Creates the partitions around `now` that are missing. Several nodes may run this at once: they take turns
    /// (a session-level advisory lock), and `IF NOT EXISTS` makes the later ones do nothing. Each partition is its own
    /// statement: one that cannot be made (its week's rows sit in the DEFAULT partition already) is logged and
    /// skipped, and those rows stay readable where they are.
    static func ensure(around now: Int64, _ database: PostgresEngine) async throws {
        let logger = database.logger
        try await database.read { connection in
            let lock = PostgresMigrations.lockKey + 1
            try await connection.query("SELECT pg_advisory_lock(\(lock))", logger: logger)
            for week in weeks(around: now) {
                for table in tables {
                    do {
                        try await connection.query(
                            PostgresQuery(unsafeSQL: createStatement(table, week: week)), logger: logger)
                    } catch {
                        logger.warning(
                            "could not create the partition \(name(table, week: week)): \(String(reflecting: error))")
                    }
                }
            }
            try await connection.query("SELECT pg_advisory_unlock(\(lock))", logger: logger)
        }
    }
}

extension PostgresPartitions {
    /// A partition of one of `tables`: its name and the range of `received_at` it holds.
    struct Partition: Equatable {
        var table: String
        var name: String
        var from: Int64
        var to: Int64
    }

    /// The range partitions of `tables` (not the DEFAULT ones) whose range ends at or before `cut`.
    static func partitions(endingBy cut: Int64, _ connection: PostgresConnection, _ logger: Logger) async throws
        -> [Partition]
    {
        let rows = try await connection.query(
            """
            SELECT p.relname::text, c.relname::text, pg_get_expr(c.relpartbound, c.oid)
            FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid JOIN pg_class p ON p.oid = i.inhparent
            WHERE p.relname = ANY(\(tables)) AND p.relnamespace = c.relnamespace
                AND p.relnamespace = to_regnamespace(current_schema())
            """, logger: logger)
        var found: [Partition] = []
        for try await (table, name, bound) in rows.decode((String, String, String).self) {
            guard let (from, to) = range(bound), to <= cut else { continue }
            found.append(Partition(table: table, name: name, from: from, to: to))
        }
        return found.sorted { ($0.from, $0.table) < ($1.from, $1.table) }
    }

    /// The range of a bound as `pg_get_expr` writes it: `FOR VALUES FROM ('1795392000000') TO ('1795996800000')`;
    /// nil for `DEFAULT` or anything else.
    static func range(_ bound: String) -> (Int64, Int64)? {
        guard bound.hasPrefix("FOR VALUES FROM") else { return nil }
        let numbers = bound.split(whereSeparator: { !($0.isNumber || $0 == "-") }).compactMap { Int64($0) }
        guard numbers.count == 2, numbers[0] < numbers[1] else { return nil }
        return (numbers[0], numbers[1])
    }
}
